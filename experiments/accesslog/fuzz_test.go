package accesslog_test

import (
	"io"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/experiments/accesslog"
)

// readEvery reads a log to its end: no panic, every request in start
// order, every line counted once.
func readEvery(t *testing.T, f *accesslog.Format, log string, keys []string) {
	rd, err := accesslog.NewReader(strings.NewReader(log), accesslog.Options{Format: f, Keys: keys, WindowMS: 2000})
	if err != nil {
		return
	}
	last := -1e300
	n := int64(0)
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.StartMS < last {
			t.Fatalf("start %v after %v", r.StartMS, last)
		}
		last = r.StartMS
		n++
	}
	st := rd.Stats()
	if n+st.Bad+st.Filtered+st.Skipped != st.Lines {
		t.Fatalf("%d requests + %d bad + %d filtered + %d skipped != %d lines", n, st.Bad, st.Filtered, st.Skipped, st.Lines)
	}
}

func FuzzTextLine(f *testing.F) {
	f.Add(`127.0.0.1 - - [01/Dec/2026:18:14:20 +0000] "GET / HTTP/1.1" 200 612 "-" "curl/8.5.0"`)
	f.Add(`10.0.0.2 - frank [01/Dec/2026:19:14:20 +0100] "POST /login?a=1 HTTP/1.1" 429 0 "x" "y"` + "\n\n")
	f.Add(`a - - [31/Feb/2026:99:14:20 +9999] "" x "" ""`)
	combined, err := accesslog.ParseFormat("combined")
	if err != nil {
		f.Fatal(err)
	}
	timed, err := accesslog.ParseFormat(timedFormat)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, log string) {
		readEvery(t, combined, log, []string{"$binary_remote_addr", "$uri$arg_a"})
		readEvery(t, timed, log, []string{"$http_x_api_key"})
	})
}

func FuzzJSONLine(f *testing.F) {
	f.Add(`{"remote_addr":"10.0.0.9","status": "429","msec": 1796148860.123,"request_time":0.023,"request":"GET /\u00e9 HTTP/1.1"}`)
	f.Add(`{"msec": 1.5, "x": null}` + "\n" + `{"msec":"\"}`)
	jf, err := accesslog.ParseFormat(`{"remote_addr":"$remote_addr","status":"$status","msec":$msec,"request_time":$request_time,"request":"$request"}`)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, log string) {
		readEvery(t, jf, log, []string{"$remote_addr:$uri"})
	})
}

func FuzzFormat(f *testing.F) {
	f.Add("combined")
	f.Add(timedFormat)
	f.Add(`log_format j escape=json '{"a":"$msec","b":$status}';`)
	f.Add(`'$msec' "${status}x"`)
	f.Fuzz(func(t *testing.T, def string) {
		fm, err := accesslog.ParseFormat(def)
		if err != nil {
			return
		}
		readEvery(t, fm, "1.000 200\n{\"a\":\"1.5\",\"b\":200}\n", nil)
	})
}

func FuzzEnvoyFormat(f *testing.F) {
	f.Add(accesslog.EnvoyDefault)
	f.Add(`{"start_time": "%START_TIME%", "code": %RESPONSE_CODE%}`)
	f.Add("%REQ(X?Y):10% %% %RESP(A)%")
	f.Fuzz(func(t *testing.T, def string) {
		fm, err := accesslog.ServerFormat("envoy", def)
		if err != nil {
			return
		}
		readEvery(t, fm, "[2016-04-15T20:17:00.310Z] \"POST / HTTP/2\" 204 - 1 2 3 4 \"a\" \"b\" \"c\" \"d\" \"e\"\n", nil)
	})
}

func FuzzHAProxyLine(f *testing.F) {
	f.Add(`<134>Feb  6 12:14:14 haproxy[14389]: 10.0.1.2:33317 [06/Feb/2009:12:14:14.655] http-in static/srv1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {1wt.eu} "GET /index.html HTTP/1.1"`)
	f.Add(`<134>1 2009-02-06T12:14:14.655000+00:00 h haproxy 1 - [x] 10.0.1.3:1 [06/Feb/2009:12:14:15.0012] a b/<NOSRV> 5/-1/-1/-1/5 503 2 - - SC-- 1/1/0/0/0 0/0 {} "POST /x HTTP/1.1"` + "\nFeb 31 99:14:14 : ")
	hf, err := accesslog.ServerFormat("haproxy", "option httplog\ncapture request header X-Api-Key len 9")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, log string) {
		readEvery(t, hf, log, []string{"$remote_addr", "$http_x_api_key$uri"})
	})
}

func FuzzHAProxyFormat(f *testing.F) {
	f.Add("")
	f.Add(accesslog.HAProxyHTTPSLog)
	f.Add("frontend a\n option httplog\n capture request header Host len 9\n capture response header X len 2\n log-format \"%ci [%t] %ST %hr %hs %{+Q}r\"")
	f.Add(`%{+Q,-X}ci\ %[src,lower] %% %t`)
	f.Fuzz(func(t *testing.T, def string) {
		fm, err := accesslog.ServerFormat("haproxy", def)
		if err != nil {
			return
		}
		readEvery(t, fm, "<134>Feb  6 12:14:14 haproxy[1]: 10.0.1.2:33317 [06/Feb/2009:12:14:14.655] a b/c 1/0/3/69/109 200 2 - - ---- 1/1/1/1/0 0/0 {x} {} \"GET / HTTP/1.1\"\n", nil)
	})
}

func FuzzVegetaLine(f *testing.F) {
	f.Add(`1796148860123456789,200,4500000,0,3,"Get ""x"", y",b2sK,smoke,0,GET,http://127.0.0.1:8080/api/items?id=1,Q29udA==`)
	f.Add(`{"attack":"a","seq":0,"code":200,"timestamp":"2026-12-01T20:14:20.123456789+02:00","latency":4500000,"error":"","url":"http://h/x","headers":{"A":["b\"]"],"C":[]}}`)
	f.Add("1,2,3\n\"\n,,,")
	csv, err := accesslog.ServerFormat("vegeta", "csv")
	if err != nil {
		f.Fatal(err)
	}
	js, err := accesslog.ServerFormat("vegeta", "json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, log string) {
		readEvery(t, csv, log, []string{"$request_method $uri", "$vegeta_error"})
		readEvery(t, js, log, []string{"$vegeta_attack$arg_id"})
	})
}

func FuzzK6Line(f *testing.F) {
	f.Add(`{"type":"Point","data":{"time":"2017-05-09T14:34:45.625742514+02:00","value":1,"tags":{"method":"GET","status":"200","url":"https://httpbin.test.k6.io/get?a=1"}},"metric":"http_reqs"}` + "\n" +
		`{"type":"Point","data":{"time":"2017-05-09T14:34:45.625742514+02:00","value":459.865729,"tags":{"method":"GET","status":"200","url":"https://httpbin.test.k6.io/get"}},"metric":"http_req_duration"}`)
	f.Add(`{"type":"Metric","data":{"type":"trend","contains":"time","tainted":null,"thresholds":["avg<1000"],"submetrics":null},"metric":"http_req_duration"}`)
	f.Add(`{"type":"Point","data":{"time":"2017-05-09T14:34:45Z","value":1e-7,"tags":{"status":"0","tenant":"x"}},"metric":"http_reqs"}` + "\n" + `{"type":"Point","data":{"time":"2017-05-09T14:34:45Z","value":1e-7},"metric":"http_req_duration"}`)
	k6, err := accesslog.ServerFormat("k6", "tenant")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, log string) {
		readEvery(t, k6, log, []string{"$tag_tenant", "$request_method $uri$arg_a"})
	})
}
