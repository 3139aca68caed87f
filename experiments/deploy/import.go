package deploy

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/experiments/limiter"
)

// Imported is a deployed limiter's configuration read back: the inverse of
// an Export. Its stages are library-exact gates, each with the key
// expression the deployment looks a request up by (nginx's limit_req_zone
// key, in nginx's variable syntax); a shadow replay
// (experiments/shadow) offers a log's requests to them.
type Imported struct {
	Format string
	Stages []ImportedStage
	// Status is the status a refused request gets (nginx's
	// limit_req_status, 503 by default).
	Status int
	// Where names the block the stages were read from ("location /api/").
	Where string
	// Notes say what the import read and left aside.
	Notes []string
}

// ImportedStage is one gate of an import.
type ImportedStage struct {
	Spec *limiter.Spec
	// Key is the key expression ("$binary_remote_addr"; a constant key,
	// one state for every request, has no variable).
	Key string
	// Name is the deployment's name for it (nginx's zone).
	Name string
}

// Specs are the stages' gates.
func (im *Imported) Specs() []*limiter.Spec {
	out := make([]*limiter.Spec, len(im.Stages))
	for i, s := range im.Stages {
		out[i] = s.Spec
	}
	return out
}

// ImportOptions choose what to read when a configuration holds several
// limited blocks.
type ImportOptions struct {
	// Location picks nginx's location block by its arguments ("/api/",
	// "= /login", "~ ^/v1/"): needed when several blocks set limit_req.
	Location string
}

// Unmodelled is a directive the lab does not model, named with what the
// lab will and won't do.
type Unmodelled struct {
	Directive string
	Line      int
	Why       string
}

func (e *Unmodelled) Error() string {
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Directive, e.Why)
}

// importers lists the formats an import reads; each is the inverse of its
// export.
func importers() map[string]func(text string, opt ImportOptions) (*Imported, error) {
	return map[string]func(string, ImportOptions) (*Imported, error){
		"envoy":   importEnvoy,
		"nginx":   importNginx,
		"traefik": importTraefik,
	}
}

// ImportFormats names the formats Import reads.
func ImportFormats() []string {
	var out []string
	for name := range importers() {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Import reads a deployed limiter's configuration in a format.
func Import(format, text string, opt ImportOptions) (*Imported, error) {
	imp, ok := importers()[format]
	if !ok {
		return nil, fmt.Errorf("import: %q is not a format the lab imports (%s)", format, strings.Join(ImportFormats(), ", "))
	}
	im, err := imp(text, opt)
	if err != nil {
		return nil, err
	}
	if len(im.Stages) == 0 {
		return nil, errors.New("import: no limiter in the configuration")
	}
	for i, s := range im.Stages {
		s.Spec.Normalize()
		if errs := s.Spec.Validate(fmt.Sprintf("stages[%d]", i)); len(errs) > 0 {
			return nil, fmt.Errorf("import: %s %s is outside the lab's range: %v", format, s.Name, errs)
		}
	}
	im.Format = format
	return im, nil
}
