package admission

// DefaultTolerationSeconds lets a created pod tolerate not-ready and
// unreachable nodes for 300 s unless it tolerates them already.
type DefaultTolerationSeconds struct{}

// Name implements Plugin.
func (DefaultTolerationSeconds) Name() string { return "DefaultTolerationSeconds" }

// Mutate implements Mutator.
func (DefaultTolerationSeconds) Mutate(_ Store, a *Attributes) error {
	if a.Operation != Create || a.Kind() != podGK {
		return nil
	}
	spec := child(a.Object, "spec")
	tols, _ := spec["tolerations"].([]any)
	notReady, unreachable := false, false
	for _, tol := range objectList(tols) {
		key, effect := str(tol, "key"), str(tol, "effect")
		if effect != "" && effect != "NoExecute" {
			continue
		}
		if key == "" || key == "node.kubernetes.io/not-ready" {
			notReady = true
		}
		if key == "" || key == "node.kubernetes.io/unreachable" {
			unreachable = true
		}
	}
	for _, t := range []struct {
		key  string
		done bool
	}{{"node.kubernetes.io/not-ready", notReady}, {"node.kubernetes.io/unreachable", unreachable}} {
		if !t.done {
			tols = append(tols, map[string]any{"key": t.key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)})
		}
	}
	spec["tolerations"] = tols
	return nil
}
