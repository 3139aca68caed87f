package accesslog

import (
	"fmt"
	"strings"
)

// Servers other than nginx: their log formats written as nginx-style
// definitions over the variables the reader knows ($start_time, the
// request's start as RFC 3339 with a fraction; $upstream_service_time_ms;
// $status; $remote_addr; $http_*; ...).

// EnvoyDefault is Envoy's default access log format (its documented
// "Default format string").
const EnvoyDefault = `[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"`

// ALB is the AWS Application Load Balancer's access log entry, its
// documented fields in order up to request_creation_time (the request's
// start, to the microsecond); the fields after it are read as one.
// target_processing_time (s; -1 when no target answered) is the service
// time; client:port gives $remote_addr.
const ALB = `$alb_type $alb_time $alb_elb $client_port $target_port $request_processing_time $upstream_response_time $response_processing_time $status $target_status $bytes_received $bytes_sent "$request" "$http_user_agent" $ssl_cipher $ssl_protocol $target_group_arn "$trace_id" "$host" "$chosen_cert_arn" $matched_rule_priority $start_time $alb_rest`

// Servers names the log formats ServerFormat reads.
func Servers() []string { return []string{"nginx", "envoy", "alb", "haproxy", "vegeta", "k6"} }

// LogFormatHelp says what a server's log format definition is (the
// --log-format of lab shadow, the web form's field), "" for a server the
// lab does not read.
func LogFormatHelp(server string) string {
	switch server {
	case "nginx":
		return "its log_format (default combined): a log_format's name in the nginx config, the definition ('$remote_addr ... $msec $request_time'), the directive, or a JSON (escape=json) definition"
	case "envoy":
		return "its format string or JSON format (default: Envoy's default format)"
	case "alb":
		return "none (the entry's fields are fixed)"
	case "haproxy":
		return "its log-format string, or its config (option httplog, log-format, capture request header ...: a frontend as it is; default: option httplog)"
	case "vegeta":
		return "csv (default) or json, as vegeta encode --to wrote it"
	case "k6":
		return "k6 run --out json=FILE's output: the script's own tags to read as $tag_NAME, e.g. 'tenant client_id' (default: none)"
	}
	return ""
}

// ServerFormat compiles a server's log format: nginx's log_format (see
// ParseFormat); Envoy's format string or JSON format ("" is Envoy's
// default; its command operators become variables, see EnvoyVariables);
// ALB's fixed entry ("" only); HAProxy's log-format or config lines ("" is
// option httplog, see readHAProxyDef); vegeta's encoding, "csv" (or "")
// or "json"; k6's JSON output (def: further tags to read, see k6Format).
func ServerFormat(server, def string) (*Format, error) {
	switch server {
	case "nginx":
		return ParseFormat(def)
	case "envoy":
		if strings.TrimSpace(def) == "" {
			def = EnvoyDefault
		}
		text, err := EnvoyVariables(def)
		if err != nil {
			return nil, err
		}
		return ParseFormat(text)
	case "alb":
		if def != "" {
			return nil, fmt.Errorf("alb: the entry's fields are fixed: give no log format")
		}
		return ParseFormat(ALB)
	case "haproxy":
		return haproxyFormat(def)
	case "vegeta":
		return vegetaFormat(def)
	case "k6":
		return k6Format(def)
	}
	return nil, fmt.Errorf("log format: server %q: the lab reads %s", server, strings.Join(Servers(), ", "))
}

// EnvoyVariables turns an Envoy format string's command operators into
// variables: %START_TIME% $start_time (with a format argument: refused,
// the default is RFC 3339 with ms), %REQ(:PATH)% and
// %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% $request_uri, %REQ(:METHOD)%
// $request_method, %REQ(:AUTHORITY)% $host, %REQ(NAME)% $http_name,
// %RESPONSE_CODE% $status, %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%
// $upstream_service_time_ms, %DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT% and
// %DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT% $remote_addr, and any
// other %OP(ARG)% $envoy_op_arg.
func EnvoyVariables(def string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(def); {
		if def[i] != '%' {
			b.WriteByte(def[i])
			i++
			continue
		}
		j := strings.IndexByte(def[i+1:], '%')
		if j < 0 {
			return "", fmt.Errorf("envoy format: a %% with no closing %% at byte %d", i)
		}
		op := def[i+1 : i+1+j]
		i += j + 2
		if op == "" {
			b.WriteByte('%')
			continue
		}
		name, err := envoyVariable(op)
		if err != nil {
			return "", err
		}
		b.WriteString("${" + name + "}")
	}
	return b.String(), nil
}

func envoyVariable(op string) (string, error) {
	base, arg, hasArg := strings.Cut(op, "(")
	if hasArg {
		arg, _, _ = strings.Cut(arg, ")")
	}
	first, _, _ := strings.Cut(arg, "?")
	header := strings.ToLower(first)
	switch {
	case base == "START_TIME" && !hasArg:
		return "start_time", nil
	case base == "START_TIME":
		return "", fmt.Errorf("envoy format: %%START_TIME(%s)%%: the lab reads START_TIME in its default form (RFC 3339 with ms)", arg)
	case base == "RESPONSE_CODE":
		return "status", nil
	case base == "DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT", base == "DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT":
		return "remote_addr", nil
	case base == "REQ" && (header == ":path" || header == "x-envoy-original-path"):
		return "request_uri", nil
	case base == "REQ" && header == ":method":
		return "request_method", nil
	case base == "REQ" && header == ":authority":
		return "host", nil
	case base == "REQ":
		return "http_" + varName(header), nil
	case base == "RESP" && header == "x-envoy-upstream-service-time":
		return "upstream_service_time_ms", nil
	}
	name := "envoy_" + varName(strings.ToLower(base))
	if hasArg {
		name += "_" + varName(header)
	}
	return name, nil
}

// varName is a header or operator name as a variable's: letters, digits
// and '_'.
func varName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
