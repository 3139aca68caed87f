package output_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/experiments/output"
	"github.com/ratelab/ratelab/experiments/sweep"
)

// TestSeriesCSVHasTheClientSeries: a client-model run's series.csv gives
// the attempts, retries and goodput per window that the run page draws
// (its "Goodput over time" and "Attempts over time"), summing to the
// point's totals; before, series.csv had none of them, and its
// rejected_rps (every attempt the gate refused) could pass its offered_rps
// (first attempts) with nothing to explain it. A point without the client
// model (a policy without behaviour) leaves the cells empty.
func TestSeriesCSVHasTheClientSeries(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"seed":4,
		"workload":{"duration_ms":3000,"parts":[{"type":"poisson","client":"api","rate_rps":150}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":90,"burst":10}],
		"policies":[{"name":"plain"},{"name":"retry","timeout_ms":150,"retries":2,"backoff_ms":30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := parse(t, "series.csv", output.SeriesCSV(res))
	want := []string{"point", "limiter", "window_start_ms", "offered_rps", "released_rps", "rejected_rps", "in_system_max", "attempts_rps", "retries_rps", "goodput_rps"}
	if !slices.Equal(rows[0], want) {
		t.Fatalf("header %v, want %v", rows[0], want)
	}
	col := func(key string) int { return slices.Index(rows[0], key) }
	sum := map[string]map[string]float64{}
	for _, r := range rows[1:] {
		if sum[r[0]] == nil {
			sum[r[0]] = map[string]float64{}
		}
		for _, key := range want[7:] {
			if r[col(key)] == "" {
				sum[r[0]][key+" empty"]++
				continue
			}
			v, err := strconv.ParseFloat(r[col(key)], 64)
			if err != nil {
				t.Fatalf("%s %q: %v", key, r[col(key)], err)
			}
			sum[r[0]][key] += v / 10 // per 100 ms window, × 10
		}
	}
	for i := range res.Points {
		p := &res.Points[i]
		s := sum[strconv.Itoa(i)]
		if p.Metrics.Client == nil || p.Series.Attempts == nil {
			if s["attempts_rps"] != 0 || s["goodput_rps empty"] == 0 {
				t.Errorf("point %d (plain model): %v, want empty cells", i, s)
			}
			continue
		}
		cm := p.Metrics.Client
		if int(s["attempts_rps"]+0.5) != cm.Attempts || int(s["retries_rps"]+0.5) != cm.Retries || int(s["goodput_rps"]+0.5) != p.Metrics.OnTime {
			t.Errorf("point %d: series sums attempts %v retries %v goodput %v, the point has %d, %d, %d",
				i, s["attempts_rps"], s["retries_rps"], s["goodput_rps"], cm.Attempts, cm.Retries, p.Metrics.OnTime)
		}
		if cm.Retries == 0 {
			t.Errorf("point %d made no retries: the test tells nothing", i)
		}
	}
}

// TestClientsCSVHasTheAttempts: under client behaviour clients.csv gives
// each client's attempts at the gate after its requests (offered), since
// admitted counts admitted attempts, retries included: a client's
// admitted is at most its attempts, which sum to the point's attempts;
// a point without client behaviour gives its arrivals as its attempts.
func TestClientsCSVHasTheAttempts(t *testing.T) {
	cfg, err := document.DecodeConfig([]byte(`{"version":1,"seed":4,
		"workload":{"duration_ms":3000,"parts":[{"type":"clients","group":"c","clients":3,"rate_rps":60,"arrival":"poisson"}]},
		"server":{"workers":1,"service_ms":10,"deadline_ms":200},
		"limiters":[{"type":"token-bucket","rate_rps":90,"burst":10}],
		"policies":[{"name":"plain"},{"name":"retry","timeout_ms":150,"retries":3,"backoff_ms":30}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := sweep.Run(context.Background(), cfg, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := parse(t, "clients.csv", output.ClientsCSV(res))
	want := []string{"point", "limiter", "client", "group", "offered", "attempts", "admitted", "admitted_rps", "share_pct"}
	if !slices.Equal(rows[0], want) {
		t.Fatalf("header %v, want %v", rows[0], want)
	}
	attempts := map[string]int{}
	retried := false
	for _, r := range rows[1:] {
		offered, _ := strconv.Atoi(r[4])
		tried, _ := strconv.Atoi(r[5])
		admitted, _ := strconv.Atoi(r[6])
		if admitted > tried || tried != offered && res.Points[mustAtoi(t, r[0])].Metrics.Client == nil {
			t.Fatalf("row %v: offered %d, attempts %d, admitted %d", r, offered, tried, admitted)
		}
		retried = retried || tried > offered
		attempts[r[0]] += tried
	}
	for i := range res.Points {
		p := &res.Points[i]
		want := p.Metrics.Arrivals
		if p.Metrics.Client != nil {
			want = p.Metrics.Client.Attempts
		}
		if got := attempts[strconv.Itoa(i)]; got != want {
			t.Errorf("point %d: clients' attempts sum to %d, want %d", i, got, want)
		}
	}
	if !retried {
		t.Error("no client made more attempts than requests: the case does not retry")
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
