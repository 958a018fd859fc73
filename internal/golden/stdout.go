package golden

import (
	"io"
	"os"
	"testing"
)

// Stdout runs fn and returns what it wrote to os.Stdout (a program's main,
// say). Tests that call it must not run in parallel with others that
// print.
func Stdout(t testing.TB, fn func()) []byte {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		done <- b
	}()
	defer func() {
		os.Stdout = saved
	}()
	fn()
	w.Close()
	out := <-done
	r.Close()
	return out
}
