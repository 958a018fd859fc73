package kubelet

import (
	"fmt"
	"testing"
	"time"
)

func TestInterpretCommand(t *testing.T) {
	forever := process{}
	server := process{server: true}
	exit := func(after time.Duration, code int64) process { return process{exits: true, after: after, code: code} }
	for _, tc := range []struct {
		cmd  []string
		want process
	}{
		{[]string{"sleep", "infinity"}, forever},
		{[]string{"sleep", "inf"}, forever},
		{[]string{"sleep", "1e309"}, forever},
		{[]string{"sleep", "99999999999999999"}, forever},
		{[]string{"sleep", "9223372036854775807"}, forever},
		{[]string{"sleep", "30"}, exit(30*time.Second, 0)},
		{[]string{"sleep", "1.5"}, exit(time.Second, 0)},
		{[]string{"sleep", "2m", "30"}, exit(150*time.Second, 0)},
		{[]string{"sleep", "1d"}, exit(24*time.Hour, 0)},
		{[]string{"sleep", "abc"}, exit(0, 1)},
		{[]string{"sleep", "-1"}, exit(0, 1)},
		{[]string{"sleep"}, exit(0, 1)},
		{[]string{"true"}, exit(0, 0)},
		{[]string{"false"}, exit(0, 1)},
		{[]string{"/bin/false"}, exit(0, 1)},
		{[]string{"sh", "-c", "exit 3"}, exit(0, 3)},
		{[]string{"sh", "-c", "echo hello; sleep 5; exit 3"}, exit(5*time.Second, 3)},
		{[]string{"/bin/sh", "-c", "echo hi && sleep 2 && false"}, exit(2*time.Second, 1)},
		{[]string{"/bin/sh", "-c", "false || exit 7"}, exit(0, 7)},
		{[]string{"/bin/sh", "-c", "true || exit 7"}, exit(0, 0)},
		{[]string{"sh", "-c", "exit 300"}, exit(0, 44)},
		{[]string{"sh", "-c", "exit abc"}, exit(0, 2)},
		{[]string{"sh", "-c", "false; exit"}, exit(0, 1)},
		{[]string{"sh", "-ec", "false; sleep 10"}, exit(0, 1)},
		{[]string{"sh", "-c", "false; sleep 10"}, exit(10*time.Second, 0)},
		{[]string{"sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"}, exit(630*time.Second, 0)},
		{[]string{"sh", "-c", "while true; do echo hi; sleep 5; done"}, server},
		{[]string{"sh", "-c", "trap : TERM INT; sleep infinity & wait"}, forever},
		{[]string{"sh", "-c", "sleep 10 & wait"}, forever},
		{[]string{"sh", "-c", "tail -f /dev/null"}, forever},
		{[]string{"sh", "-c", "python app.py"}, server},
		{[]string{"sh", "-c", "python migrate.py; exit 3"}, exit(0, 3)},
		{[]string{"sh", "-c", "exec nginx -g 'daemon off;'"}, server},
		{[]string{"sh", "-c", "echo 'a; exit 4'; exit 5"}, exit(0, 5)},
		{[]string{"sh", "-c", "echo done > /tmp/x # exit 9\nexit 1"}, exit(0, 1)},
		{[]string{"sh", "-c", "sleep 99999999999999999; exit 1"}, forever},
		{[]string{"sh"}, exit(0, 0)},
		{[]string{"sh", "/script.sh"}, server},
		{[]string{"nginx", "-g", "daemon off;"}, server},
		{[]string{"/tini", "--", "sh", "-c", "exit 4"}, exit(0, 4)},
		{[]string{"busybox", "sleep", "3"}, exit(3*time.Second, 0)},
		{[]string{"echo", "hello"}, exit(0, 0)},
		{[]string{"sh", "-c", "cat /etc/hosts | grep localhost; exit 2"}, exit(0, 2)},
		{[]string{"sh", "-c", "FOO=1 sleep 3"}, exit(3*time.Second, 0)},
		{[]string{"sh", "-c", "for i in 1 2; do echo $i; done"}, server},
	} {
		got, ok := interpretCommand(tc.cmd)
		if !ok || got != tc.want {
			t.Errorf("%q: got %+v (ok %v), want %+v", tc.cmd, got, ok, tc.want)
		}
	}
	if _, ok := interpretCommand(nil); ok {
		t.Error("no command: ok")
	}
}

// FuzzInterpretCommand: any command line is read without a panic, and a
// process that exits does so within maxSleep with a code in 0..255.
func FuzzInterpretCommand(f *testing.F) {
	for _, s := range []string{"sleep 1e309", "exit 3", "echo 'x", "a && b || c | d & e", "sleep 5m 3h 1d", "\\", "(", `"unterminated`} {
		f.Add("sh", "-c", s)
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		p, _ := interpretCommand([]string{a, b, c})
		if p.exits && (p.after < 0 || p.after > maxSleep || p.code < 0 || p.code > 255) {
			t.Fatalf("%q %q %q: %+v", a, b, c, p)
		}
	})
}

// The crash loop's shortcut over whole periods gives the state the walk
// run by run gives, at any time.
func TestCrashLoopSkipsPeriods(t *testing.T) {
	C := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, b := range []behaviour{
		{pull: 2 * time.Second, start: time.Second, exits: true, exitAfter: 5 * time.Second, exitCode: 1},
		{pull: 2 * time.Second, start: time.Second, exits: true, exitAfter: 0, exitCode: 0},
		{pull: 2 * time.Second, start: time.Second, exits: true, exitAfter: 11 * time.Minute, exitCode: 3},
		{pull: 0, start: 0, exits: true, exitAfter: 7 * time.Second, exitCode: 137, oom: true},
	} {
		in := &ctrInput{name: "app", image: "x", b: b, restartOnSuccess: true, restartFail: true}
		for _, d := range []time.Duration{0, 3 * time.Second, 17 * time.Minute, 3*time.Hour + 7*time.Second, 100 * time.Hour, 2400*time.Hour + 13*time.Second} {
			at := C.Add(d)
			skipPeriods = true
			fast := in.at(C, at)
			skipPeriods = false
			slow := in.at(C, at)
			skipPeriods = true
			show := func(s ctrState) string {
				l, tm := s.last, s.terminated
				s.last, s.terminated = nil, nil
				return fmt.Sprintf("%+v last %+v terminated %+v", s, l, tm)
			}
			if show(fast) != show(slow) {
				t.Errorf("%+v at %s:\nfast %s\nslow %s", b, d, show(fast), show(slow))
			}
		}
	}
}
