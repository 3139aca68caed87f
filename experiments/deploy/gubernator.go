package deploy

import (
	"fmt"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// gubernatorFormat is a shell script for Gubernator v2.13.0: the daemons'
// environment (GUBER_GLOBAL_SYNC_WAIT and GUBER_GLOBAL_BATCH_LIMIT, under
// sharing async) and the request each client sends (POST
// /v1/GetRateLimits, the gRPC GetRateLimits as JSON): limit, duration,
// algorithm and behavior (GLOBAL under sharing async, DRAIN_OVER_LIMIT
// when the point drains), one key for every client, as the gate has.
//
// Mapping: the gubernator gate's point is written as it is (exact): the
// rerun is the point itself.
func gubernatorFormat() *Format {
	return &Format{
		Name:    "gubernator",
		Label:   "Gubernator v2.13.0",
		Ext:     "sh",
		File:    "gubernator.sh",
		Doc:     "a shell script: the daemons' GUBER_ environment and the GetRateLimits request each client sends (curl to the HTTP gateway)",
		Comment: "# ",
		From:    []From{{Type: limiter.TypeGubernator, export: gubernatorFromGubernator}},
	}
}

// Gubernator's Behavior flags the export writes.
const (
	gubernatorBehaviorGlobal = 2
	gubernatorBehaviorDrain  = 32
)

func gubernatorFromGubernator(pt *reading) (*Export, error) {
	limit, duration := int64(pt.param(limiter.ParamLimit)), int64(pt.param(limiter.ParamDuration))
	algorithm := "TOKEN_BUCKET"
	if pt.option(limiter.OptionGubernatorAlgorithm) == limiter.GubernatorLeakyBucket {
		algorithm = "LEAKY_BUCKET"
	}
	behavior, flags := 0, []string{}
	async := pt.spec.Replicated() && pt.spec.Option(limiter.OptionSharing) == limiter.SharingAsync
	if async {
		behavior += gubernatorBehaviorGlobal
		flags = append(flags, "GLOBAL (2)")
	}
	if pt.option(limiter.OptionDrainOverLimit) == limiter.GubernatorDrainYes {
		behavior += gubernatorBehaviorDrain
		flags = append(flags, "DRAIN_OVER_LIMIT (32)")
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	if async {
		b.WriteString("# Every daemon's environment (all replicas alike):\n")
		fmt.Fprintf(&b, "export GUBER_GLOBAL_SYNC_WAIT=%sms\n", num(pt.values.Get(limiter.ParamSyncWait)))
		fmt.Fprintf(&b, "export GUBER_GLOBAL_BATCH_LIMIT=%s\n", num(pt.values.Get(limiter.ParamBatchLimit)))
	}
	b.WriteString("# The request each client sends, one key for all of them (GUBER_HTTP_ADDRESS: the daemon's gateway).\n")
	if len(flags) > 0 {
		fmt.Fprintf(&b, "# behavior %d: %s\n", behavior, strings.Join(flags, " | "))
	}
	fmt.Fprintf(&b, "curl -s \"http://${GUBER_HTTP_ADDRESS:-localhost:1050}/v1/GetRateLimits\" -d '{\"requests\": [{\"name\": \"ratelab\", \"unique_key\": \"all\", \"hits\": 1, \"limit\": %d, \"duration\": %d, \"algorithm\": \"%s\", \"behavior\": %d}]}'\n",
		limit, duration, algorithm, behavior)
	e := &Export{Text: b.String()}
	e.Notes = append(e.Notes, "Gubernator answers status UNDER_LIMIT or OVER_LIMIT with reset_time; the caller refuses on OVER_LIMIT.")
	e.Rerun = spec(limiter.TypeGubernator, limiter.Params{limiter.ParamLimit: float64(limit), limiter.ParamDuration: float64(duration)},
		map[string]string{limiter.OptionGubernatorAlgorithm: pt.option(limiter.OptionGubernatorAlgorithm), limiter.OptionDrainOverLimit: pt.option(limiter.OptionDrainOverLimit)})
	return e, nil
}
