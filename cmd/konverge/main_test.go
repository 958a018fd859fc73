package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCPUProfileWrittenWhenAsked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pb")
	t.Setenv(envCPUProfile, path)
	args := os.Args
	defer func() { os.Args = args }()
	os.Args = []string{"konverge", "version", "--client"}
	out := os.Stdout
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	os.Stdout = devnull
	err = run()
	os.Stdout = out
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() == 0 {
		t.Errorf("%s is empty", path)
	}
}
