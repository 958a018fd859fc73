package apimeta

import (
	"errors"
	"fmt"
	"strings"

	"github.com/konverge/konverge/value"
)

// Reason is why an API call failed, as metav1.StatusReason says it.
type Reason string

// The reasons konverge reports.
const (
	ReasonNotFound         Reason = "NotFound"
	ReasonAlreadyExists    Reason = "AlreadyExists"
	ReasonConflict         Reason = "Conflict"
	ReasonInvalid          Reason = "Invalid"
	ReasonBadRequest       Reason = "BadRequest"
	ReasonMethodNotAllowed Reason = "MethodNotAllowed"
	ReasonForbidden        Reason = "Forbidden"
	ReasonGone             Reason = "Gone"
	ReasonRequestTooLarge  Reason = "RequestEntityTooLarge"
	ReasonUnsupportedMedia Reason = "UnsupportedMediaType"
	ReasonInternal         Reason = "InternalError"
	ReasonTimeout          Reason = "Timeout"
	ReasonTooManyRequests  Reason = "TooManyRequests"
)

// Cause is one problem of an Invalid object.
type Cause struct {
	// Type is the kind of problem: "FieldValueRequired",
	// "FieldValueInvalid", "FieldValueDuplicate", "FieldValueNotSupported",
	// "FieldValueForbidden", "FieldValueTooLong".
	Type string
	// Field is the path of the field as kube-apiserver spells it
	// ("spec.template.spec.containers[0].image"); Path returns it as a
	// value.Path, konverge's one field-path type.
	Field string
	// Message is the API server's message for the field ("Required value").
	Message string
}

// Path returns Field as a value.Path (see value.ParsePath: an index,
// [key] of a map, or structured-merge-diff's [k="v"] of server-side
// apply's conflicts); nil when Field is empty or does not parse.
func (c Cause) Path() value.Path {
	if c.Field == "" {
		return nil
	}
	p, err := value.ParsePath(c.Field)
	if err != nil {
		return nil
	}
	return p
}

// StatusError is a failed API call, as kube-apiserver reports it.
type StatusError struct {
	Code    int
	Reason  Reason
	Message string
	// Group and Kind (or resource) and Name of the object, when known.
	Group, Kind, Name string
	Causes            []Cause
	// RetryAfterSeconds is when the server suggests trying again (the
	// details.retryAfterSeconds of a 429 or 503), 0 when it says nothing.
	RetryAfterSeconds int
}

func (e *StatusError) Error() string { return e.Message }

// ReasonOf returns the Reason of a *StatusError in err's chain, or "".
func ReasonOf(err error) Reason {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Reason
	}
	return ""
}

// IsNotFound reports a NotFound error.
func IsNotFound(err error) bool { return ReasonOf(err) == ReasonNotFound }

// IsAlreadyExists reports an AlreadyExists error.
func IsAlreadyExists(err error) bool { return ReasonOf(err) == ReasonAlreadyExists }

// IsConflict reports a Conflict error (a stale resourceVersion).
func IsConflict(err error) bool { return ReasonOf(err) == ReasonConflict }

// IsInvalid reports an Invalid error (validation failed).
func IsInvalid(err error) bool { return ReasonOf(err) == ReasonInvalid }

// NewNotFound is the error for a missing object: `deployments.apps "web" not found`.
func NewNotFound(groupResource, name string) *StatusError {
	return &StatusError{Code: 404, Reason: ReasonNotFound, Name: name, Kind: groupResource,
		Message: fmt.Sprintf("%s %q not found", groupResource, name)}
}

// NewAlreadyExists is the error for creating an existing object.
func NewAlreadyExists(groupResource, name string) *StatusError {
	return &StatusError{Code: 409, Reason: ReasonAlreadyExists, Name: name, Kind: groupResource,
		Message: fmt.Sprintf("%s %q already exists", groupResource, name)}
}

// NewConflict is the error for a write with a stale resourceVersion.
func NewConflict(groupResource, name, why string) *StatusError {
	return &StatusError{Code: 409, Reason: ReasonConflict, Name: name, Kind: groupResource,
		Message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", groupResource, name, why)}
}

// NewBadRequest is the error for a malformed request.
func NewBadRequest(msg string) *StatusError {
	return &StatusError{Code: 400, Reason: ReasonBadRequest, Message: msg}
}

// NewInvalid is the error for an object that fails validation, worded as
// kube-apiserver words it: `Deployment.apps "web" is invalid: spec.selector:
// Required value`, the causes in brackets when there are several.
// kindGroup is "Deployment.apps" ("Pod" for the core group).
func NewInvalid(kindGroup, name string, causes []Cause) *StatusError {
	parts := make([]string, len(causes))
	for i, c := range causes {
		if c.Field == "" {
			parts[i] = c.Message
		} else {
			parts[i] = c.Field + ": " + c.Message
		}
	}
	msg := fmt.Sprintf("%s %q is invalid", kindGroup, name)
	switch len(parts) {
	case 0:
	case 1:
		msg += ": " + parts[0]
	default:
		msg += ": [" + strings.Join(parts, ", ") + "]"
	}
	return &StatusError{Code: 422, Reason: ReasonInvalid, Kind: kindGroup, Name: name, Message: msg, Causes: causes}
}
