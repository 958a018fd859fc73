package kubelet

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

//go:embed default-profile.yaml
var defaultProfileYAML []byte

// DefaultProfileYAML returns the default simulation profile, with its
// comments: what `konverge cluster init` uses without --sim-profile.
func DefaultProfileYAML() []byte { return append([]byte(nil), defaultProfileYAML...) }

// ProfileMetaKey is the key of the simulation profile in the store's meta
// bucket; none means the default.
const ProfileMetaKey = "sim-profile"

// Never is the Duration that never ends ("never").
const Never Duration = -1

// Duration is a time.Duration written as Go writes it ("2s"), or "never".
type Duration time.Duration

// UnmarshalJSON reads "2s", "never" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n float64
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("duration: want a string such as \"2s\", got %s", b)
		}
		if n < 0 || n*float64(time.Second) >= math.MaxInt64 || math.IsNaN(n) {
			return fmt.Errorf("duration: %s seconds is out of range", b)
		}
		*d = Duration(n * float64(time.Second))
		return nil
	}
	if s == "never" {
		*d = Never
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	if v < 0 {
		return fmt.Errorf("duration %q: negative", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as Go does.
func (d Duration) MarshalJSON() ([]byte, error) {
	if d == Never {
		return json.Marshal("never")
	}
	return json.Marshal(time.Duration(d).String())
}

// Profile is how the simulated containers behave (see
// default-profile.yaml, which documents every field).
type Profile struct {
	Pull    *Duration `json:"pull,omitempty"`
	Start   *Duration `json:"start,omitempty"`
	InitRun *Duration `json:"initRun,omitempty"`
	Stop    *Duration `json:"stop,omitempty"`
	Images  []Rule    `json:"images,omitempty"`
	// Nodes are the nodes of the cluster; none: one node, konverge-node.
	Nodes []NodeSpec `json:"nodes,omitempty"`
	// SkipVolumeBinding places pods without looking at their claims, as
	// scripts/stand-in-kubelet.py binds them in the recordings made
	// without kube-scheduler. It is not read from a profile file: it
	// exists to replay those recordings.
	SkipVolumeBinding bool `json:"-"`
}

// Rule is the behaviour of the containers it matches.
type Rule struct {
	Image     string     `json:"image,omitempty"`
	Name      string     `json:"name,omitempty"`
	Command   string     `json:"command,omitempty"`
	Pull      string     `json:"pull,omitempty"`
	PullTime  *Duration  `json:"pullTime,omitempty"`
	StartTime *Duration  `json:"startTime,omitempty"`
	Exit      *Exit      `json:"exit,omitempty"`
	Stop      *Duration  `json:"stop,omitempty"`
	Readiness *ProbeRule `json:"readiness,omitempty"`
	Liveness  *ProbeRule `json:"liveness,omitempty"`
	Startup   *ProbeRule `json:"startup,omitempty"`
}

// Exit is when and how a container's process ends.
type Exit struct {
	// After is a duration, or "sleep": the N of "sleep N" in the command.
	After     string `json:"after"`
	Code      int64  `json:"code,omitempty"`
	OOMKilled bool   `json:"oomKilled,omitempty"`
}

// ProbeRule is what a probe answers over time since the container
// started: failure before SuccessAfter, success until FailAfter (zero:
// for ever), failure after; a Latency of at least the probe's timeout is
// a failure.
type ProbeRule struct {
	SuccessAfter Duration `json:"successAfter,omitempty"`
	FailAfter    Duration `json:"failAfter,omitempty"`
	Latency      Duration `json:"latency,omitempty"`
}

// ParseProfile reads a profile in YAML (or JSON), strictly: unknown fields
// are errors. Fields left out take the default profile's values; rules
// given replace the default rules.
func ParseProfile(data []byte) (*Profile, error) {
	var p Profile
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("kubelet: simulation profile: %w", err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("kubelet: simulation profile: %w", err)
	}
	if p.Images == nil {
		p.Images = DefaultProfile().Images
	}
	return &p, nil
}

// DefaultProfile returns the default profile.
func DefaultProfile() *Profile {
	var p Profile
	if err := yaml.UnmarshalStrict(defaultProfileYAML, &p); err != nil {
		panic("kubelet: default profile: " + err.Error())
	}
	if err := p.validate(); err != nil {
		panic("kubelet: default profile: " + err.Error())
	}
	return &p
}

func (p *Profile) validate() error {
	var errs []error
	for i, r := range p.Images {
		for _, g := range []string{r.Image, r.Name, r.Command} {
			if _, err := path.Match(g, ""); err != nil {
				errs = append(errs, fmt.Errorf("images[%d]: glob %q: %w", i, g, err))
			}
		}
		switch r.Pull {
		case "", "ok", "fail":
		default:
			errs = append(errs, fmt.Errorf("images[%d].pull: %q is not ok or fail", i, r.Pull))
		}
		if r.Exit != nil && r.Exit.After != "sleep" && r.Exit.After != "command" {
			d, err := time.ParseDuration(r.Exit.After)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("images[%d].exit.after: want a duration, \"command\" or \"sleep\": %w", i, err))
			case d < 0:
				errs = append(errs, fmt.Errorf("images[%d].exit.after: %q is negative", i, r.Exit.After))
			}
		}
	}
	if err := validateNodes(p.Nodes); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Meta reads and writes a profile in the store's meta bucket:
// cluster/local's Store satisfies it.
type Meta interface {
	GetMeta(ctx context.Context, key string) ([]byte, error)
	PutMeta(ctx context.Context, key string, value []byte) error
}

// LoadProfile returns the profile stored in m, or the default one.
func LoadProfile(ctx context.Context, m Meta) (*Profile, error) {
	data, err := m.GetMeta(ctx, ProfileMetaKey)
	if err != nil {
		return nil, fmt.Errorf("kubelet: load the simulation profile: %w", err)
	}
	if data == nil {
		return DefaultProfile(), nil
	}
	return ParseProfile(data)
}

// SaveProfile checks a profile (YAML) and stores it in m.
func SaveProfile(ctx context.Context, m Meta, data []byte) error {
	if _, err := ParseProfile(data); err != nil {
		return err
	}
	if err := m.PutMeta(ctx, ProfileMetaKey, data); err != nil {
		return fmt.Errorf("kubelet: save the simulation profile: %w", err)
	}
	return nil
}

// behaviour is what the profile says of one container.
type behaviour struct {
	// invalidImage is the kubelet's message for an image reference it
	// cannot parse: the container never starts.
	invalidImage string
	pullFails    bool
	pull, start  time.Duration
	// exits reports a process that ends by itself after exitAfter.
	exits     bool
	exitAfter time.Duration
	exitCode  int64
	oom       bool
	stop      time.Duration // Never: the whole grace period
	readiness ProbeRule
	liveness  ProbeRule
	startup   ProbeRule
}

func (d *Duration) or(def Duration) Duration {
	if d == nil {
		return def
	}
	return *d
}

// behaviourOf resolves the rules for one container.
func (p *Profile) behaviourOf(image, name string, command []string, init bool) behaviour {
	b := behaviour{
		pull:  time.Duration(p.Pull.or(Duration(2 * time.Second))),
		start: time.Duration(p.Start.or(Duration(time.Second))),
		stop:  time.Duration(p.Stop.or(0)),
	}
	if init {
		b.exits, b.exitAfter = true, time.Duration(p.InitRun.or(Duration(time.Second)))
	}
	img := NormalizeImage(image)
	cmd := strings.Join(command, " ")
	matched := false
	for _, r := range p.Images {
		if !globMatch(r.Image, img) || !globMatch(r.Name, name) || !globMatch(r.Command, cmd) {
			continue
		}
		b.pullFails = r.Pull == "fail"
		b.pull = time.Duration(r.PullTime.or(Duration(b.pull)))
		b.start = time.Duration(r.StartTime.or(Duration(b.start)))
		b.stop = time.Duration(r.Stop.or(Duration(b.stop)))
		switch {
		case r.Exit == nil:
			b.byCommand(command, false)
		case r.Exit.After == "sleep" || r.Exit.After == "command":
			b.exits = false
			b.byCommand(command, r.Exit.After == "command")
		default:
			b.exits, b.exitCode, b.oom = true, r.Exit.Code, r.Exit.OOMKilled
			b.exitAfter, _ = time.ParseDuration(r.Exit.After)
			if b.oom {
				b.exitCode = 137
			}
		}
		if r.Readiness != nil {
			b.readiness = *r.Readiness
		}
		if r.Liveness != nil {
			b.liveness = *r.Liveness
		}
		if r.Startup != nil {
			b.startup = *r.Startup
		}
		matched = true
		break
	}
	if !matched {
		b.byCommand(command, false)
	}
	b.invalidImage = invalidImage(image)
	return b
}

// byCommand lets the container's command decide how its process ends
// (see command.go): a command that ends gives the exit; one that does not
// runs for ever. Without a command the image's own runs: for ever, or,
// with shell, the shell that reads nothing and ends at once.
func (b *behaviour) byCommand(command []string, shell bool) {
	p, ok := interpretCommand(command)
	switch {
	case !ok && shell:
		b.exits, b.exitAfter, b.exitCode = true, 0, 0
	case !ok, p.server && b.exits:
		// No command, or a program the simulation does not know in an
		// init container: it runs as initRun says.
	case p.exits:
		b.exits, b.exitAfter, b.exitCode, b.oom = true, p.after, p.code, false
	default:
		b.exits = false
	}
}

// globMatch matches s against a glob; "" matches everything.
func globMatch(glob, s string) bool {
	if glob == "" {
		return true
	}
	// '*' matches '/' too: slashes are hidden from path.Match.
	ok, _ := path.Match(strings.ReplaceAll(glob, "/", "\x1f"), strings.ReplaceAll(s, "/", "\x1f"))
	return ok
}

// NormalizeImage writes an image reference the way the profile's globs
// see it: without "docker.io/library/" or "docker.io/", with ":latest"
// when it has neither tag nor digest.
func NormalizeImage(image string) string {
	s := strings.TrimPrefix(image, "docker.io/")
	s = strings.TrimPrefix(s, "index.docker.io/")
	s = strings.TrimPrefix(s, "library/")
	last := s[strings.LastIndex(s, "/")+1:]
	if !strings.Contains(last, ":") && !strings.Contains(last, "@") {
		s += ":latest"
	}
	return s
}
