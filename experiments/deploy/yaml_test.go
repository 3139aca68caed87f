package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// Resilience4j's Spring Boot schema and Traefik's rateLimit middleware,
// mirrored as Go structs from their documentation and sources (no network):
// an export decodes strictly (unknown keys refused, every value of its
// field's type, durations in the library's own syntax) and passes the
// checks the library makes when it reads them.

// strictYAML decodes one document into out, refusing unknown fields.
func strictYAML(text string, out any) error {
	dec := yaml.NewDecoder(bytes.NewReader([]byte(text)))
	dec.KnownFields(true)
	return dec.Decode(out)
}

// whole is an integer field: YAML's !!int only (the decoder would
// truncate 1.5 into an int; Java's Integer and Go's int64 refuse it).
type whole int64

func (w *whole) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return fmt.Errorf("%q is not a whole number", n.Value)
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	*w = whole(v)
	return err
}

// springDuration is a java.time.Duration as Spring Boot's simple style
// reads it (DurationStyle.SIMPLE): a whole number and a unit of ns, us,
// ms, s, m, h or d (ms when left out).
type springDuration time.Duration

var springSimple = regexp.MustCompile(`^([+-]?\d+)([a-zA-Z]{0,2})$`)

func (d *springDuration) UnmarshalYAML(n *yaml.Node) error {
	m := springSimple.FindStringSubmatch(n.Value)
	if n.Kind != yaml.ScalarNode || m == nil {
		return fmt.Errorf("%q is not a Spring duration", n.Value)
	}
	v, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return err
	}
	units := map[string]time.Duration{"": time.Millisecond, "ns": time.Nanosecond, "us": time.Microsecond,
		"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	u, ok := units[strings.ToLower(m[2])]
	if !ok {
		return fmt.Errorf("%q: unknown unit %q", n.Value, m[2])
	}
	*d = springDuration(time.Duration(v) * u)
	return nil
}

// resilience4jSpring is application.yaml as far as Resilience4j's rate limiters go
// (resilience4j.ratelimiter: CommonRateLimiterConfigurationProperties).
type resilience4jSpring struct {
	Resilience4j struct {
		RateLimiter struct {
			Instances map[string]resilience4jInstance `yaml:"instances"`
			Configs   map[string]resilience4jInstance `yaml:"configs"`
		} `yaml:"ratelimiter"`
	} `yaml:"resilience4j"`
}

// resilience4jInstance is one InstanceProperties.
type resilience4jInstance struct {
	LimitForPeriod             *whole          `yaml:"limitForPeriod"`
	LimitRefreshPeriod         *springDuration `yaml:"limitRefreshPeriod"`
	TimeoutDuration            *springDuration `yaml:"timeoutDuration"`
	SubscribeForEvents         *bool           `yaml:"subscribeForEvents"`
	AllowHealthIndicatorToFail *bool           `yaml:"allowHealthIndicatorToFail"`
	RegisterHealthIndicator    *bool           `yaml:"registerHealthIndicator"`
	EventConsumerBufferSize    *whole          `yaml:"eventConsumerBufferSize"`
	WritableStackTraceEnabled  *bool           `yaml:"writableStackTraceEnabled"`
	BaseConfig                 *string         `yaml:"baseConfig"`
}

// check is what InstanceProperties' setters and RateLimiterConfig.Builder
// refuse.
func (r *resilience4jInstance) check() error {
	switch {
	case r.LimitForPeriod != nil && *r.LimitForPeriod < 1:
		return errors.New("LimitForPeriod should be greater than 0")
	case r.LimitRefreshPeriod != nil && time.Duration(*r.LimitRefreshPeriod) < time.Nanosecond:
		return errors.New("LimitRefreshPeriod is too short")
	case r.TimeoutDuration != nil && *r.TimeoutDuration < 0:
		return errors.New("TimeoutDuration should not be negative")
	case r.EventConsumerBufferSize != nil && *r.EventConsumerBufferSize < 1:
		return errors.New("eventConsumerBufferSize must be greater than or equal to 1")
	}
	return nil
}

// TestResilience4jSchema: each documented field decodes with a value of its
// type and is refused with a value of another, and an unknown key is
// refused.
func TestResilience4jSchema(t *testing.T) {
	doc := "resilience4j:\n  ratelimiter:\n    instances:\n      a:\n        %s: %s\n"
	cases := []struct {
		field, good, bad string
		check            func(resilience4jInstance) bool
	}{
		{"limitForPeriod", "10", "ten", func(r resilience4jInstance) bool { return *r.LimitForPeriod == 10 }},
		{"limitRefreshPeriod", "500ns", "500 nanos", func(r resilience4jInstance) bool { return *r.LimitRefreshPeriod == springDuration(500) }},
		{"timeoutDuration", "5s", "5x", func(r resilience4jInstance) bool { return time.Duration(*r.TimeoutDuration) == 5*time.Second }},
		{"subscribeForEvents", "true", "maybe", func(r resilience4jInstance) bool { return *r.SubscribeForEvents }},
		{"allowHealthIndicatorToFail", "false", "[1]", func(r resilience4jInstance) bool { return !*r.AllowHealthIndicatorToFail }},
		{"registerHealthIndicator", "true", "{}", func(r resilience4jInstance) bool { return *r.RegisterHealthIndicator }},
		{"eventConsumerBufferSize", "100", "1.5", func(r resilience4jInstance) bool { return *r.EventConsumerBufferSize == 100 }},
		{"writableStackTraceEnabled", "false", "nope", func(r resilience4jInstance) bool { return !*r.WritableStackTraceEnabled }},
		{"baseConfig", "default", "[a, b]", func(r resilience4jInstance) bool { return *r.BaseConfig == "default" }},
	}
	for _, c := range cases {
		t.Run(c.field, func(t *testing.T) {
			var s resilience4jSpring
			if err := strictYAML(fmt.Sprintf(doc, c.field, c.good), &s); err != nil {
				t.Fatalf("good value: %v", err)
			}
			if !c.check(s.Resilience4j.RateLimiter.Instances["a"]) {
				t.Errorf("good value decoded as %+v", s.Resilience4j.RateLimiter.Instances["a"])
			}
			if err := strictYAML(fmt.Sprintf(doc, c.field, c.bad), &s); err == nil {
				t.Errorf("bad value %q decoded", c.bad)
			}
		})
	}
	var s resilience4jSpring
	if err := strictYAML(fmt.Sprintf(doc, "limitForPeriodd", "10"), &s); err == nil {
		t.Error("unknown field decoded")
	}
	err := strictYAML(fmt.Sprintf(doc, "limitForPeriod", "0"), &s)
	if r := s.Resilience4j.RateLimiter.Instances["a"]; err != nil || r.check() == nil {
		t.Errorf("limitForPeriod 0: %v, passes the check", err)
	}
}

// TestResilience4jExportsDecodeStrictly: every Resilience4j export is an
// instance "ratelab" that decodes and passes the library's checks, with
// the values the rerun gate runs.
func TestResilience4jExportsDecodeStrictly(t *testing.T) {
	t.Parallel()
	for i, e := range exports(t, "resilience4j") {
		var s resilience4jSpring
		if err := strictYAML(e.Text, &s); err != nil {
			t.Fatalf("export %d %s: %v\n%s", i, label(e), err, e.Text)
		}
		r, ok := s.Resilience4j.RateLimiter.Instances["ratelab"]
		if !ok || r.LimitForPeriod == nil || r.LimitRefreshPeriod == nil || r.TimeoutDuration == nil {
			t.Fatalf("export %d: instance ratelab incomplete: %+v", i, r)
		}
		if err := r.check(); err != nil {
			t.Errorf("export %d: %v", i, err)
		}
		if e.Rerun == nil {
			continue
		}
		want := map[string]float64{"limit_for_period": float64(*r.LimitForPeriod),
			"limit_refresh_period_ms": float64(*r.LimitRefreshPeriod) / 1e6, "timeout_ms": float64(*r.TimeoutDuration) / 1e6}
		for name, v := range want {
			if got := e.Rerun.ValuesOf(name)[0]; got != v {
				t.Errorf("export %d: %s %g, rerun %g", i, name, v, got)
			}
		}
	}
}

// traefikDuration is paerser's types.Duration as Traefik reads it: a whole
// number of seconds, or a Go duration ("1s", "100ms", "1m").
type traefikDuration time.Duration

func (d *traefikDuration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("%q is not a duration", n.Value)
	}
	if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		*d = traefikDuration(time.Duration(v) * time.Second)
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	*d = traefikDuration(v)
	return err
}

// traefikDynamic is the file provider's dynamic configuration as far as
// the rateLimit middleware goes (dynamic.RateLimit, SourceCriterion,
// IPStrategy and Redis).
type traefikDynamic struct {
	HTTP struct {
		Middlewares map[string]struct {
			RateLimit *traefikRateLimit `yaml:"rateLimit"`
		} `yaml:"middlewares"`
	} `yaml:"http"`
}

type traefikRateLimit struct {
	Average         *whole           `yaml:"average"`
	Period          *traefikDuration `yaml:"period"`
	Burst           *whole           `yaml:"burst"`
	SourceCriterion *struct {
		IPStrategy *struct {
			Depth       *whole   `yaml:"depth"`
			ExcludedIPs []string `yaml:"excludedIPs"`
			IPv6Subnet  *whole   `yaml:"ipv6Subnet"`
		} `yaml:"ipStrategy"`
		RequestHeaderName *string `yaml:"requestHeaderName"`
		RequestHost       *bool   `yaml:"requestHost"`
	} `yaml:"sourceCriterion"`
	Redis *struct {
		Endpoints []string `yaml:"endpoints"`
		TLS       *struct {
			CA                 string `yaml:"ca"`
			Cert               string `yaml:"cert"`
			Key                string `yaml:"key"`
			InsecureSkipVerify bool   `yaml:"insecureSkipVerify"`
		} `yaml:"tls"`
		Username       string           `yaml:"username"`
		Password       string           `yaml:"password"`
		DB             whole            `yaml:"db"`
		PoolSize       whole            `yaml:"poolSize"`
		MinIdleConns   whole            `yaml:"minIdleConns"`
		MaxActiveConns whole            `yaml:"maxActiveConns"`
		ReadTimeout    *traefikDuration `yaml:"readTimeout"`
		WriteTimeout   *traefikDuration `yaml:"writeTimeout"`
		DialTimeout    *traefikDuration `yaml:"dialTimeout"`
	} `yaml:"redis"`
}

// check is what Traefik's middleware constructor refuses: a negative
// period, and several source criteria at once.
func (r *traefikRateLimit) check() error {
	if r.Period != nil && *r.Period < 0 {
		return errors.New("negative value not valid for period")
	}
	if c := r.SourceCriterion; c != nil {
		n := 0
		if c.IPStrategy != nil {
			n++
		}
		if c.RequestHeaderName != nil && *c.RequestHeaderName != "" {
			n++
		}
		if c.RequestHost != nil && *c.RequestHost {
			n++
		}
		if n > 1 {
			return errors.New("iPStrategy and RequestHeaderName and RequestHost are mutually exclusive")
		}
	}
	return nil
}

// TestTraefikSchema: each documented field of rateLimit decodes with a
// value of its type and is refused with one of another.
func TestTraefikSchema(t *testing.T) {
	t.Parallel()
	doc := "http:\n  middlewares:\n    m:\n      rateLimit:\n%s\n"
	cases := []struct {
		name, good, bad string
		check           func(*traefikRateLimit) bool
	}{
		{"average", "        average: 100", "        average: many", func(r *traefikRateLimit) bool { return *r.Average == 100 }},
		{"period", "        period: 1m", "        period: 1 minute", func(r *traefikRateLimit) bool { return time.Duration(*r.Period) == time.Minute }},
		{"period in seconds", "        period: 10", "        period: [10]", func(r *traefikRateLimit) bool { return time.Duration(*r.Period) == 10*time.Second }},
		{"burst", "        burst: 50", "        burst: 5.5", func(r *traefikRateLimit) bool { return *r.Burst == 50 }},
		{"sourceCriterion.ipStrategy.depth", "        sourceCriterion:\n          ipStrategy:\n            depth: 2", "        sourceCriterion:\n          ipStrategy:\n            depth: two",
			func(r *traefikRateLimit) bool { return *r.SourceCriterion.IPStrategy.Depth == 2 }},
		{"sourceCriterion.ipStrategy.excludedIPs", "        sourceCriterion:\n          ipStrategy:\n            excludedIPs: [127.0.0.1]", "        sourceCriterion:\n          ipStrategy:\n            excludedIPs: {a: b}",
			func(r *traefikRateLimit) bool { return r.SourceCriterion.IPStrategy.ExcludedIPs[0] == "127.0.0.1" }},
		{"sourceCriterion.ipStrategy.ipv6Subnet", "        sourceCriterion:\n          ipStrategy:\n            ipv6Subnet: 64", "        sourceCriterion:\n          ipStrategy:\n            ipv6Subnet: wide",
			func(r *traefikRateLimit) bool { return *r.SourceCriterion.IPStrategy.IPv6Subnet == 64 }},
		{"sourceCriterion.requestHeaderName", "        sourceCriterion:\n          requestHeaderName: X-Tenant", "        sourceCriterion:\n          requestHeaderName: [a]",
			func(r *traefikRateLimit) bool { return *r.SourceCriterion.RequestHeaderName == "X-Tenant" }},
		{"sourceCriterion.requestHost", "        sourceCriterion:\n          requestHost: true", "        sourceCriterion:\n          requestHost: yes please",
			func(r *traefikRateLimit) bool { return *r.SourceCriterion.RequestHost }},
		{"redis.endpoints", "        redis:\n          endpoints: [\"127.0.0.1:6379\"]", "        redis:\n          endpoints: {a: 1}",
			func(r *traefikRateLimit) bool { return r.Redis.Endpoints[0] == "127.0.0.1:6379" }},
		{"redis.db", "        redis:\n          db: 2", "        redis:\n          db: two", func(r *traefikRateLimit) bool { return r.Redis.DB == 2 }},
		{"redis.dialTimeout", "        redis:\n          dialTimeout: 5s", "        redis:\n          dialTimeout: soon",
			func(r *traefikRateLimit) bool { return time.Duration(*r.Redis.DialTimeout) == 5*time.Second }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d traefikDynamic
			if err := strictYAML(fmt.Sprintf(doc, c.good), &d); err != nil {
				t.Fatalf("good value: %v", err)
			}
			if r := d.HTTP.Middlewares["m"].RateLimit; r == nil || !c.check(r) {
				t.Errorf("good value decoded as %+v", r)
			}
			if err := strictYAML(fmt.Sprintf(doc, c.bad), &d); err == nil {
				t.Errorf("bad value decoded")
			}
		})
	}
	var d traefikDynamic
	if err := strictYAML(fmt.Sprintf(doc, "        averag: 100"), &d); err == nil {
		t.Error("unknown field decoded")
	}
	if err := strictYAML(fmt.Sprintf(doc, "        sourceCriterion:\n          requestHost: true\n          ipStrategy:\n            depth: 1"), &d); err != nil ||
		d.HTTP.Middlewares["m"].RateLimit.check() == nil {
		t.Errorf("two criteria: %v, pass the check", err)
	}
}

// TestTraefikExportsDecodeStrictly: every Traefik export is a rateLimit
// middleware that decodes and passes Traefik's checks, whose rate
// (average*1s/period, as Traefik computes it) and burst are the rerun's.
func TestTraefikExportsDecodeStrictly(t *testing.T) {
	t.Parallel()
	for i, e := range exports(t, "traefik") {
		var d traefikDynamic
		if err := strictYAML(e.Text, &d); err != nil {
			t.Fatalf("export %d %s: %v\n%s", i, label(e), err, e.Text)
		}
		r := d.HTTP.Middlewares["ratelab-ratelimit"].RateLimit
		if r == nil || r.Average == nil || r.Period == nil || r.Burst == nil {
			t.Fatalf("export %d: rateLimit incomplete: %+v", i, r)
		}
		if err := r.check(); err != nil {
			t.Errorf("export %d: %v", i, err)
		}
		rtl := float64(int64(*r.Average)*int64(time.Second)) / float64(*r.Period)
		if e.Rerun == nil {
			continue
		}
		if got := e.Rerun.ValuesOf("rate_rps")[0]; got != rtl {
			t.Errorf("export %d: rate %g, rerun %g", i, rtl, got)
		}
		if got := e.Rerun.ValuesOf("burst")[0]; got != float64(max(int64(*r.Burst), 1)) {
			t.Errorf("export %d: burst %d, rerun %g", i, *r.Burst, got)
		}
		if e.Rerun.Option("mode") != "reserve" {
			t.Errorf("export %d: rerun mode %q", i, e.Rerun.Option("mode"))
		}
	}
}
