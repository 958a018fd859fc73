package diff

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnifiedHunks(t *testing.T) {
	cases := []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"create", "", "a\nb\n", "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"delete", "a\n", "", "@@ -1 +0,0 @@\n-a\n"},
		{"change one", "a\nb\nc\n", "a\nx\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+x\n c\n"},
		{"no newline", "a\nb", "a\nc", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{
			"two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"1\nx\n3\n4\n5\n6\n7\n8\n9\n10\ny\n12\n",
			"@@ -1,5 +1,5 @@\n 1\n-2\n+x\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+y\n 12\n",
		},
		{
			"merged hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			"1\nx\n3\n4\n5\n6\n7\ny\n9\n",
			"@@ -1,9 +1,9 @@\n 1\n-2\n+x\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n 9\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, changed := unified(nil, splitLines([]byte(tc.a)), splitLines([]byte(tc.b)), 3, false)
			if string(got) != tc.want || changed != (tc.want != "") {
				t.Errorf("got (changed %v)\n%s\nwant\n%s", changed, got, tc.want)
			}
		})
	}
}

// TestEditScriptMinimal checks on random files that the edit script turns a
// into b and is as short as GNU diff --minimal's.
func TestEditScriptMinimal(t *testing.T) {
	diffPath, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("no diff program")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for round := range 60 {
		a := randomLines(rng, rng.IntN(40))
		b := mutate(rng, a)
		ops := editScript(splitLines(a), splitLines(b))
		var ra, rb bytes.Buffer
		al, bl := splitLines(a), splitLines(b)
		changes := 0
		for _, op := range ops {
			switch op.kind {
			case opEqual:
				if !bytes.Equal(al[op.a], bl[op.b]) {
					t.Fatalf("round %d: equal op on different lines", round)
				}
				ra.Write(al[op.a])
				rb.Write(bl[op.b])
			case opDelete:
				ra.Write(al[op.a])
				changes++
			case opInsert:
				rb.Write(bl[op.b])
				changes++
			}
		}
		if !bytes.Equal(ra.Bytes(), a) || !bytes.Equal(rb.Bytes(), b) {
			t.Fatalf("round %d: script does not rebuild the inputs", round)
		}
		fa, fb := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		os.WriteFile(fa, a, 0o600)
		os.WriteFile(fb, b, 0o600)
		out, _ := exec.Command(diffPath, "--minimal", fa, fb).Output()
		want := 0
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "< ") || strings.HasPrefix(l, "> ") {
				want++
			}
		}
		if changes != want {
			t.Errorf("round %d: %d changed lines, GNU diff --minimal %d", round, changes, want)
		}
	}
}

func randomLines(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	for range n {
		b.WriteString(string(rune('a' + rng.IntN(5))))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func mutate(rng *rand.Rand, a []byte) []byte {
	lines := splitLines(a)
	var out [][]byte
	for _, l := range lines {
		switch rng.IntN(6) {
		case 0: // drop
		case 1:
			out = append(out, l, []byte(string(rune('a'+rng.IntN(5)))+"\n"))
		case 2:
			out = append(out, []byte(string(rune('a'+rng.IntN(5)))+"\n"))
		default:
			out = append(out, l)
		}
	}
	if rng.IntN(3) == 0 {
		out = append(out, []byte("z\n"))
	}
	return bytes.Join(out, nil)
}
