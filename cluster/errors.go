package cluster

import (
	"errors"
	"fmt"
	"strings"

	"github.com/konverge/konverge/apimeta"
	"github.com/konverge/konverge/schema"
)

// The API's errors, defined in package apimeta (so that packages below
// cluster, such as kinds and validate, can report them).
type (
	// Reason is why an API call failed, as metav1.StatusReason says it.
	Reason = apimeta.Reason
	// Cause is one problem of an Invalid object.
	Cause = apimeta.Cause
	// StatusError is a failed API call, as kube-apiserver reports it.
	StatusError = apimeta.StatusError
)

// The reasons konverge reports.
const (
	ReasonNotFound         = apimeta.ReasonNotFound
	ReasonAlreadyExists    = apimeta.ReasonAlreadyExists
	ReasonConflict         = apimeta.ReasonConflict
	ReasonInvalid          = apimeta.ReasonInvalid
	ReasonBadRequest       = apimeta.ReasonBadRequest
	ReasonMethodNotAllowed = apimeta.ReasonMethodNotAllowed
	ReasonForbidden        = apimeta.ReasonForbidden
	ReasonGone             = apimeta.ReasonGone
	ReasonRequestTooLarge  = apimeta.ReasonRequestTooLarge
	ReasonUnsupportedMedia = apimeta.ReasonUnsupportedMedia
	ReasonInternal         = apimeta.ReasonInternal
	ReasonTimeout          = apimeta.ReasonTimeout
	ReasonTooManyRequests  = apimeta.ReasonTooManyRequests
)

// ReasonOf returns the Reason of a *StatusError in err's chain, or "".
func ReasonOf(err error) Reason { return apimeta.ReasonOf(err) }

// IsStatus reports an error of the API server (a *StatusError in err's
// chain), as opposed to one of the caller or of the transport.
func IsStatus(err error) bool {
	var se *StatusError
	return errors.As(err, &se)
}

// IsNotFound reports a NotFound error.
func IsNotFound(err error) bool { return apimeta.IsNotFound(err) }

// IsAlreadyExists reports an AlreadyExists error.
func IsAlreadyExists(err error) bool { return apimeta.IsAlreadyExists(err) }

// IsConflict reports a Conflict error (a stale resourceVersion).
func IsConflict(err error) bool { return apimeta.IsConflict(err) }

// IsTooManyRequests reports a TooManyRequests error (429): an eviction
// that a PodDisruptionBudget refuses, or a server that sheds load.
func IsTooManyRequests(err error) bool { return ReasonOf(err) == ReasonTooManyRequests }

// IsInvalid reports an Invalid error (validation failed).
func IsInvalid(err error) bool { return apimeta.IsInvalid(err) }

// NewNotFound is the error for a missing object: `deployments.apps "web" not found`.
func NewNotFound(groupResource, name string) *StatusError {
	return apimeta.NewNotFound(groupResource, name)
}

// NewAlreadyExists is the error for creating an existing object.
func NewAlreadyExists(groupResource, name string) *StatusError {
	return apimeta.NewAlreadyExists(groupResource, name)
}

// NewConflict is the error for a write with a stale resourceVersion.
func NewConflict(groupResource, name, why string) *StatusError {
	return apimeta.NewConflict(groupResource, name, why)
}

// NewBadRequest is the error for a malformed request.
func NewBadRequest(msg string) *StatusError { return apimeta.NewBadRequest(msg) }

// NewInvalid is the error for an object that fails validation (see apimeta.NewInvalid).
func NewInvalid(kindGroup, name string, causes []Cause) *StatusError {
	return apimeta.NewInvalid(kindGroup, name, causes)
}

// QualifiedKind is how kube-apiserver names a kind in its errors:
// "Deployment.apps", "Secret" for the core group.
func QualifiedKind(gvk schema.GVK) string {
	if gvk.Group == "" {
		return gvk.Kind
	}
	return gvk.Kind + "." + gvk.Group
}

// NewUndecodable is kube-apiserver's error for a body it cannot decode into
// its kind's Go type (a BadRequest), worded as kube-apiserver v1.37.1
// words it: `Secret in version "v1" cannot be handled as a Secret: illegal
// base64 data at input byte 3`, msg being what the decoder reports. The
// field the decoder stopped at is not in the message (kube-apiserver's
// has none) but in the one Cause, so that a caller can name it
// (UndecodableField, Cause.Path). The embedded cluster and apply's plans
// report it with this one function.
func NewUndecodable(gvk schema.GVK, field, msg string) *StatusError {
	e := NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s",
		gvk.Kind, gvk.Version, gvk.Kind, msg))
	e.Group, e.Kind = gvk.Group, gvk.Kind
	if field != "" {
		e.Causes = []Cause{{Type: "FieldValueInvalid", Field: field, Message: msg}}
	}
	return e
}

// UndecodableField returns the field of an error of NewUndecodable:
// "data.password".
func UndecodableField(e *StatusError) (field string, ok bool) {
	if e == nil || e.Reason != ReasonBadRequest || len(e.Causes) != 1 || e.Kind == "" ||
		!strings.HasPrefix(e.Message, e.Kind+" in version ") {
		return "", false
	}
	return e.Causes[0].Field, e.Causes[0].Field != ""
}
