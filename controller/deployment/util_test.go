package deployment_test

import (
	"testing"

	"github.com/konverge/konverge/controller/deployment"
)

// Cases of upstream's TestResolveFenceposts (deployment_util_test.go).
func TestResolveFenceposts(t *testing.T) {
	for _, tc := range []struct {
		surge, unavail      any
		desired             int64
		wantSurge, wantUnav int64
		wantErr             bool
	}{
		{int64(0), int64(0), 0, 0, 1, false},
		{"39%", "39%", 10, 4, 3, false},
		{"oops", int64(1), 10, 0, 0, true},
		{"55%", "urg", 10, 0, 0, true},
		{nil, "39%", 10, 0, 3, false},
		{"39%", nil, 10, 4, 0, false},
		{nil, nil, 10, 0, 1, false},
		{"25%", "25%", 3, 1, 0, false},
	} {
		s, u, err := deployment.ResolveFenceposts(tc.surge, tc.unavail, tc.desired)
		if (err != nil) != tc.wantErr {
			t.Errorf("%v/%v/%d: err %v", tc.surge, tc.unavail, tc.desired, err)
			continue
		}
		if !tc.wantErr && (s != tc.wantSurge || u != tc.wantUnav) {
			t.Errorf("%v/%v/%d: got %d,%d want %d,%d", tc.surge, tc.unavail, tc.desired, s, u, tc.wantSurge, tc.wantUnav)
		}
	}
}
