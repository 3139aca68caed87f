package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"

	"github.com/ratelab/ratelab/experiments/document"
	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// The config document editor: a config as JSON (the same document lab run
// --config and POST /api/runs take), to edit and run as a new sweep. It
// edits what the new-sweep form cannot express: chains.

// EditorPage is a config document in the editor.
type EditorPage struct {
	Title, Intro string
	Back, Config string
}

// editRun shows a stored run's config document in the editor.
func (s *Server) editRun(w http.ResponseWriter, r *http.Request) {
	run := s.runOr404(w, r)
	if run == nil {
		return
	}
	s.render(w, r, http.StatusOK, Editor(EditorPage{Title: "Edit " + runName(*run) + " as a config document", Back: "/runs/" + run.ID, Config: string(run.Config),
		Intro: "The new-sweep form cannot express chains: edit the document (the same JSON lab run --config and POST /api/runs take) and run it as a new sweep."}))
}

// runDocument queues a config document posted from the editor (its
// "config" field). The field is decoded as the body streams in, like the
// API's document: 413 past MaxAPIBytes or a trace past form.MaxTraceBytes,
// 400 for a body that is not a form or a document that is not JSON text,
// 415 for a body that is not a form, 422 for a config that cannot run.
func (s *Server) runDocument(w http.ResponseWriter, r *http.Request) {
	release := s.admitBody(w, r, MaxAPIBytes, 1)
	if release == nil {
		return
	}
	defer release()
	body := http.MaxBytesReader(w, r.Body, MaxAPIBytes)
	doc, err := formField(r, body, "config")
	if s.refusedBody(w, r, err) {
		return
	}
	if err != nil {
		status := http.StatusBadRequest
		var tooLarge *http.MaxBytesError
		var unsupported unsupportedForm
		msg := err.Error()
		switch {
		case errors.As(err, &tooLarge):
			status, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("The form is larger than %s, the limit.", format.Bytes(int(tooLarge.Limit)))
		case errors.As(err, &unsupported):
			status = http.StatusUnsupportedMediaType
		}
		s.errorPage(w, r, status, "The form could not be read", msg)
		return
	}
	cfg, err := document.ReadConfig(doc, document.Limits{MaxBytes: MaxAPIBytes, MaxString: form.MaxTraceBytes})
	if s.refusedBody(w, r, err) {
		return
	}
	if err != nil {
		status, _, _ := documentStatus(err)
		title := "This config cannot run"
		if status == http.StatusRequestEntityTooLarge {
			title = "This config is too large"
		}
		var read *document.ReadError
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			s.errorPage(w, r, status, "The form is too large", fmt.Sprintf("The form is larger than %s, the limit.", format.Bytes(int(tooLarge.Limit))))
		case errors.As(err, &read):
			// The form's own encoding is broken.
			s.errorPage(w, r, status, "The form could not be read", read.Err.Error())
		default:
			s.errorPage(w, r, status, title, err.Error())
		}
		return
	}
	run, err := s.runner.Submit(r.Context(), cfg, cfg.Name, "")
	if err != nil {
		switch status := submitStatus(w, err); status {
		case http.StatusTooManyRequests:
			s.errorPage(w, r, status, "The lab is busy", fmt.Sprintf("The queue of waiting sweeps is full: go back and try again in %d seconds.", RetryAfterSeconds))
		case http.StatusServiceUnavailable:
			s.errorPage(w, r, status, "The lab is shutting down", "The lab is shutting down and takes no new sweeps.")
		case http.StatusUnprocessableEntity:
			s.errorPage(w, r, status, "Unknown trace file", err.Error())
		default:
			s.internalError(w, r, "queue the chain check", err)
		}
		return
	}
	http.Redirect(w, r, "/runs/"+run.ID, http.StatusSeeOther)
}

// unsupportedForm is a post that is neither urlencoded nor multipart.
type unsupportedForm struct{ contentType string }

func (e unsupportedForm) Error() string {
	return fmt.Sprintf("the body is %q, not a form (application/x-www-form-urlencoded or multipart/form-data)", format.Clip(e.contentType, 80))
}

// formField streams the value of the first field called name of a posted
// form, urlencoded or multipart, without reading the rest of the body.
func formField(r *http.Request, body io.Reader, name string) (io.Reader, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil {
		return nil, unsupportedForm{ct}
	}
	switch mt {
	case "application/x-www-form-urlencoded":
		return urlencodedField(bufio.NewReaderSize(body, 32<<10), name)
	case "multipart/form-data":
		if params["boundary"] == "" {
			return nil, errors.New("the multipart form has no boundary")
		}
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				return nil, fmt.Errorf("the form has no %q field", name)
			}
			if err != nil {
				return nil, err
			}
			if part.FormName() == name {
				return part, nil
			}
		}
	}
	return nil, unsupportedForm{ct}
}

// maxFormKey bounds the key of an urlencoded field.
const maxFormKey = 256

// urlencodedField skips to the field called name and returns a reader of
// its value, unescaped.
func urlencodedField(br *bufio.Reader, name string) (io.Reader, error) {
	for {
		var key []byte
		for {
			c, err := br.ReadByte()
			if err == io.EOF {
				return nil, fmt.Errorf("the form has no %q field", name)
			}
			if err != nil {
				return nil, err
			}
			if c == '=' || c == '&' {
				if c == '&' {
					key = nil // a key without a value
					break
				}
				k, err := url.QueryUnescape(string(key))
				if err != nil {
					return nil, fmt.Errorf("the form has a malformed key: %v", err)
				}
				v := &formValue{r: br}
				if k == name {
					return v, nil
				}
				if _, err := io.Copy(io.Discard, v); err != nil {
					return nil, err
				}
				break
			}
			if len(key) == maxFormKey {
				return nil, fmt.Errorf("the form has a key longer than %d bytes", maxFormKey)
			}
			key = append(key, c)
		}
	}
}

// formValue reads one urlencoded value up to the next '&', unescaping '+'
// and %XX.
type formValue struct {
	r    *bufio.Reader
	done bool
	err  error // sticky
}

func (v *formValue) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	n, err := v.read(p)
	v.err = err
	return n, err
}

func (v *formValue) read(p []byte) (int, error) {
	n := 0
	for n < len(p) && !v.done {
		// Copy the plain bytes buffered at once.
		buf, _ := v.r.Peek(v.r.Buffered())
		i := 0
		for i < len(buf) && n+i < len(p) && buf[i] != '&' && buf[i] != '+' && buf[i] != '%' {
			i++
		}
		n += copy(p[n:], buf[:i])
		_, _ = v.r.Discard(i)
		if n == len(p) {
			break
		}
		c, err := v.r.ReadByte()
		if err == io.EOF {
			v.done = true
			break
		}
		if err != nil {
			return n, err
		}
		switch c {
		case '&':
			v.done = true
			continue
		case '+':
			c = ' '
		case '%':
			h, err := v.r.Peek(2)
			if err != nil {
				if err == io.EOF {
					return n, errors.New("the form ends inside a %-escape")
				}
				return n, err
			}
			b, ok := unhex(h[0], h[1])
			if !ok {
				return n, fmt.Errorf("the form has a malformed %%-escape %q", "%"+string(h))
			}
			_, _ = v.r.Discard(2)
			c = b
		}
		p[n] = c
		n++
	}
	if n == 0 && v.done {
		return 0, io.EOF
	}
	return n, nil
}

func unhex(a, b byte) (byte, bool) {
	d := func(c byte) (byte, bool) {
		switch {
		case c >= '0' && c <= '9':
			return c - '0', true
		case c >= 'a' && c <= 'f':
			return c - 'a' + 10, true
		case c >= 'A' && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	hi, ok1 := d(a)
	lo, ok2 := d(b)
	return hi<<4 | lo, ok1 && ok2
}
