package fieldmgr

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/konverge/konverge/cluster"
)

// CheckFieldManager validates a request's field manager as kube-apiserver
// validates the options of a write (kindName "CreateOptions",
// "UpdateOptions" or "PatchOptions").
func CheckFieldManager(kindName, manager string, errs field.ErrorList) error {
	errs = append(errs, metavalidation.ValidateFieldManager(manager, field.NewPath("fieldManager"))...)
	if len(errs) == 0 {
		return nil
	}
	return FromAPIError(apierrors.NewInvalid(runtimeschema.GroupKind{Group: metav1.GroupName, Kind: kindName}, "", errs))
}

// CheckPatchOptions validates the options of a patch.
func CheckPatchOptions(pt cluster.PatchType, o cluster.PatchOptions) error {
	var errs field.ErrorList
	if pt == cluster.ApplyPatchType {
		if o.FieldManager == "" {
			errs = append(errs, field.Required(field.NewPath("fieldManager"), "is required for apply patch"))
		}
	} else if o.Force {
		errs = append(errs, field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch"))
	}
	return CheckFieldManager("PatchOptions", o.FieldManager, errs)
}

// FromAPIError converts an error of the field manager to the
// *cluster.StatusError kube-apiserver would answer: its own status, and
// any other error as an InternalError with the message.
func FromAPIError(err error) error {
	var se apierrors.APIStatus
	if errors.As(err, &se) {
		st := se.Status()
		out := &cluster.StatusError{Code: int(st.Code), Reason: cluster.Reason(st.Reason), Message: st.Message}
		if d := st.Details; d != nil {
			out.Group, out.Kind, out.Name = d.Group, d.Kind, d.Name
			for _, c := range d.Causes {
				out.Causes = append(out.Causes, cluster.Cause{Type: string(c.Type), Field: c.Field, Message: c.Message})
			}
		}
		return out
	}
	return &cluster.StatusError{Code: 500, Message: err.Error()}
}
