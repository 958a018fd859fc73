package fidelity

import "testing"

func TestMaskDiff(t *testing.T) {
	in := "diff -u -N /tmp/LIVE-4066535134/v1.ConfigMap.default.c /tmp/MERGED-3144220883/v1.ConfigMap.default.c\n" +
		"--- /tmp/LIVE-4066535134/v1.ConfigMap.default.c\t2026-11-25 14:55:42.771925247 +0000\n" +
		"+++ /tmp/MERGED-3144220883/v1.ConfigMap.default.c\t2026-11-25 14:55:42.771925247 +0000\n" +
		"@@ -1,7 +1,7 @@\n" +
		"   creationTimestamp: \"2026-11-25T14:55:42Z\"\n"
	want := "diff -u -N live/v1.ConfigMap.default.c merged/v1.ConfigMap.default.c\n" +
		"--- live/v1.ConfigMap.default.c\n" +
		"+++ merged/v1.ConfigMap.default.c\n" +
		"@@ -1,7 +1,7 @@\n" +
		"   creationTimestamp: \"<time>\"\n"
	if got := MaskDiff(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestMaskTextKlog(t *testing.T) {
	in := "W1125 18:37:20.520921    3618 diff.go:723] Object (/v1, Kind=ConfigMap: compared) keeps changing, diffing without lock\nerror: x\n"
	want := "W<klog> Object (/v1, Kind=ConfigMap: compared) keeps changing, diffing without lock\nerror: x\n"
	if got := MaskText(in); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := MaskDiff("   resourceVersion: \"290\"\n"); got != "   resourceVersion: \"<rv>\"\n" {
		t.Errorf("resourceVersion not masked: %q", got)
	}
}
