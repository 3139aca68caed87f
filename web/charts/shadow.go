package charts

import (
	"strconv"
	"time"

	"github.com/ratelab/ratelab/experiments/shadow"
)

// ShadowTimeline is a shadow replay's timeline (shadow-timeline.csv): the
// requests of each minute the log has and those the limiter would have
// limited, as bars, over the minutes (UTC) on a category axis.
func ShadowTimeline(v *shadow.View) Chart {
	o := newChart("Requests and limited per minute", "minutes without requests left out; UTC", "requests per minute",
		Grid{Left: "70", Top: "70", Right: "30", Bottom: "95"})
	layout := "15:04"
	if n := len(v.Timeline); n > 0 && v.Timeline[n-1].StartMS-v.Timeline[0].StartMS >= 24*3600e3 {
		layout = "01-02 15:04"
	}
	labels := make([]string, len(v.Timeline))
	requests := make([]Item, len(v.Timeline))
	limited := make([]Item, len(v.Timeline))
	for i, m := range v.Timeline {
		labels[i] = time.UnixMilli(int64(m.StartMS)).UTC().Format(layout)
		requests[i] = Item{Value: float64(m.Requests - m.Limited)}
		limited[i] = Item{Value: float64(m.Limited)}
	}
	o.XAxis = []XAxis{{Type: "category", Name: "minute (UTC)", NameLocation: "middle", NameGap: 28, Data: labels}}
	stack := func(s *Series) { s.Stack = "minute" }
	o.add("passed", "bar", requests, asBar, stack, colored("#2563eb"))
	o.add("limited ("+strconv.Itoa(v.Status)+")", "bar", limited, asBar, stack, colored("#dc2626"))
	if len(v.Timeline) > 60 {
		o.DataZoom = []DataZoom{{Type: "inside"}, {Type: "slider"}}
	}
	return chart("shadow-timeline", "Requests and limited per minute", o)
}
