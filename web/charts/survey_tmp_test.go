package charts

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/ratelab/ratelab/experiments/presets"
)

func TestSurveyTmp(t *testing.T) {
	if os.Getenv("SURVEY") == "" {
		t.Skip()
	}
	for _, name := range presets.Names() {
		res := runPreset(t, name)
		v := NewView(res, -1)
		groups := v.Groups()
		if b := newBounds(v, "r"); b != nil {
			groups = append(groups, b.Groups...)
		}
		for _, g := range groups {
			for _, c := range g.Charts {
				var o Option
				json.Unmarshal([]byte(c.Option), &o)
				names := map[string]bool{}
				for _, s := range o.Series {
					names[s.Name] = true
				}
				xl := 0
				if len(o.XAxis) > 0 {
					xl = len(o.XAxis[0].Data)
				}
				if len(names) > 6 || xl > 12 {
					fmt.Printf("%s\t%s\tseries=%d\txcats=%d\t%q | %q\n", name, c.ID, len(names), xl, o.Title.Text, o.Title.Subtext)
					for n := range names {
						fmt.Printf("\t\t%s\n", n)
					}
				}
			}
		}
	}
}
