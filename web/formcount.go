package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/ratelab/ratelab/web/form"
	"github.com/ratelab/ratelab/web/format"
)

// formCount answers POST /api/form/count, the new-sweep form's live count
// (static/app.js posts the form there as the user types, debounced): the
// form read as POST /runs reads it and counted by the engine's rule
// (form.CountOf, experiments.Size), as JSON. A form with errors gets 200
// with its problems, each naming its input; a form that cannot be read
// gets the API's problem answer.
func (s *Server) formCount(w http.ResponseWriter, r *http.Request) {
	release := s.admitBody(w, r, form.MaxFormBytes, formWeight)
	defer release()
	post := form.Read(w, r)
	if s.refusedBody(w, r, post.ReadErr) {
		return
	}
	if post.ReadErr != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(post.ReadErr, &tooLarge) {
			s.fail(w, r, http.StatusRequestEntityTooLarge, "The form is too large", fmt.Sprintf("The form is larger than %s, the limit.", format.Bytes(form.MaxFormBytes)))
			return
		}
		s.fail(w, r, http.StatusBadRequest, "The form could not be read", post.ReadErr.Error())
		return
	}
	writeJSON(w, http.StatusOK, form.CountOf(post))
}
