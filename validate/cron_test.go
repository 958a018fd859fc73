package validate

import "testing"

// TestParseCronRecoversPanic: robfig/cron panics on a TZ= prefix without a
// schedule after it; parseCron returns kube-apiserver's error instead,
// with the runtime's message for the slice bounds (the copy of the parser
// this replaced wrote "[3:-1]", which the runtime does not).
func TestParseCronRecoversPanic(t *testing.T) {
	err := parseCron("TZ=0")
	if err == nil || err.Error() != "invalid schedule format: runtime error: slice bounds out of range [:-1]" {
		t.Errorf("parseCron(TZ=0) = %v", err)
	}
	if err := parseCron("*/5 * * * *"); err != nil {
		t.Errorf("parseCron(*/5 * * * *) = %v", err)
	}
	if err := parseCron("* * * *"); err == nil || err.Error() != "expected exactly 5 fields, found 4: [* * * *]" {
		t.Errorf("parseCron(* * * *) = %v", err)
	}
}
