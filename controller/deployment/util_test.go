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

func rollingDeployment(replicas, statusReplicas int64, surge, unavailable any, recreate bool) map[string]any {
	strategy := map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": surge, "maxUnavailable": unavailable}}
	if recreate {
		strategy = map[string]any{"type": "Recreate"}
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "nginx", "namespace": "default"},
		"spec":     map[string]any{"replicas": replicas, "strategy": strategy},
		"status":   map[string]any{"replicas": statusReplicas},
	}
}

func replicaSet(name string, replicas int64, annotations map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": name, "namespace": "default", "annotations": annotations},
		"spec":     map[string]any{"replicas": replicas},
	}
}

// Cases of upstream's TestNewRSNewReplicas (deployment_util_test.go): the
// old ReplicaSet has 5 replicas, maxUnavailable is 1.
func TestNewRSNewReplicas(t *testing.T) {
	for _, tc := range []struct {
		name                              string
		recreate                          bool
		depReplicas, newRSReplicas, surge int64
		want                              int64
	}{
		{"can not scale up - to newRSReplicas", false, 1, 5, 1, 5},
		{"scale up - to depReplicas", false, 6, 2, 10, 6},
		{"recreate - to depReplicas", true, 3, 1, 1, 3},
	} {
		d := rollingDeployment(tc.depReplicas, 0, tc.surge, int64(1), tc.recreate)
		rs5 := replicaSet("old", 5, nil)
		newRS := replicaSet("new", tc.newRSReplicas, nil)
		got, err := deployment.NewRSNewReplicas(d, []map[string]any{rs5}, newRS)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %d, %v; want %d", tc.name, got, err, tc.want)
		}
	}
}

// Cases of upstream's TestGetReplicaSetFraction (deployment_util_test.go),
// through GetProportion with room enough for the whole fraction.
func TestGetProportionFraction(t *testing.T) {
	for _, tc := range []struct {
		name                                  string
		depReplicas, depStatusReplicas, surge int64
		rsReplicas                            int64
		maxReplicas                           string
		want                                  int64
	}{
		{"empty deployment always scales to 0", 0, 0, 0, 10, "", -10},
		{"unsynced deployment, max-replicas annotation missing", 10, 0, 0, 5, "", 0},
		{"unsynced deployment, max-replicas annotation 0", 10, 0, 0, 5, "0", 0},
		{"scale up by 1/5, annotation missing", 120, 100, 0, 50, "", 10},
		{"scale up by 1/5, annotation 0", 120, 100, 0, 50, "0", 10},
		{"scale up by 1/5", 120, 0, 0, 50, "100", 10},
		{"scale up with maxSurge by about 1/5", 120, 0, 10, 50, "110", 9},
		{"scale down by 1/6", 10, 0, 0, 6, "12", -1},
		{"scale down with maxSurge by about 1/6", 100, 0, 10, 50, "130", -8},
	} {
		d := rollingDeployment(tc.depReplicas, tc.depStatusReplicas, tc.surge, int64(0), false)
		var ann map[string]any
		if tc.maxReplicas != "" {
			ann = map[string]any{deployment.MaxReplicasAnnotation: tc.maxReplicas}
		}
		rs := replicaSet("rs", tc.rsReplicas, ann)
		toAdd := int64(1000)
		if tc.want < 0 {
			toAdd = -1000
		}
		if got := deployment.GetProportion(rs, d, toAdd, 0); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}
