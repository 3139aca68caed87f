package charts

import (
	"os"
	"strings"
	"testing"
)

func TestDumpTmp(t *testing.T) {
	want := os.Getenv("DUMP")
	if want == "" {
		t.Skip()
	}
	os.MkdirAll("/tmp/chopts", 0o755)
	for _, pc := range strings.Split(want, ",") {
		name, id, _ := strings.Cut(pc, ":")
		v := NewView(runPreset(t, name), -1)
		groups := v.Groups()
		for _, g := range groups {
			for _, c := range g.Charts {
				if id == "" || strings.HasPrefix(c.ID, id) {
					h := c.Height
					if h == 0 {
						h = 380
					}
					os.WriteFile("/tmp/chopts/"+name+"-"+c.ID+".html", []byte(`<html><head><script src="/work/wt/charts/static/echarts.min.js"></script></head><body style="margin:0"><div id=c style="width:100%;height:`+itoa(h)+`px"></div><script>var o=`+c.Option+`;var ch=echarts.init(document.getElementById('c'));ch.setOption(o);</script></body></html>`), 0o644)
				}
			}
		}
	}
}
