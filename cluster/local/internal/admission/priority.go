package admission

import (
	"fmt"

	"github.com/konverge/konverge/cluster/local/internal/jsonobj"
)

// Priority resolves a created pod's priority and preemption policy from
// the PriorityClass it names (which must exist), else from the global
// default class, else 0 and PreemptLowerPriority; an update keeps what the
// create computed. Of PriorityClasses, it allows one globalDefault.
type Priority struct{}

// Name implements Plugin.
func (Priority) Name() string { return "Priority" }

// Mutate implements Mutator.
func (Priority) Mutate(s Store, a *Attributes) error {
	if a.Kind() != podGK {
		return nil
	}
	if a.Operation == Update {
		keepPriority(a.Object, a.Old)
		return nil
	}
	spec := child(a.Object, "spec")
	className := str(spec, "priorityClassName")
	var priority int64
	preemption := "PreemptLowerPriority"
	if className == "" {
		def, err := defaultPriorityClass(s)
		if err != nil {
			return err
		}
		if def != nil {
			className = metaString(def, "name")
			priority, _ = def["value"].(int64)
			preemption = str(def, "preemptionPolicy")
		}
	} else {
		pc, err := s.Get(priorityClassGK, "", className)
		if err != nil {
			return err
		}
		if pc == nil {
			return a.forbid(fmt.Sprintf("no PriorityClass with name %s was found", className))
		}
		priority, _ = pc["value"].(int64)
		preemption = str(pc, "preemptionPolicy")
	}
	jsonobj.SetString(spec, "priorityClassName", className)
	if p, ok := spec["priority"].(int64); ok && p != priority {
		return a.forbid(fmt.Sprintf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", p, priority))
	}
	spec["priority"] = priority
	if preemption != "" {
		if p := str(spec, "preemptionPolicy"); p != "" && p != preemption {
			return a.forbid(fmt.Sprintf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", p, preemption))
		}
		spec["preemptionPolicy"] = preemption
	}
	return nil
}

// keepPriority gives an updated pod the priority and preemption policy
// the stored one has where the update leaves them out.
func keepPriority(pod, old map[string]any) {
	spec, ospec := peek(pod, "spec"), peek(old, "spec")
	if spec == nil || ospec == nil {
		return
	}
	for _, f := range []string{"priority", "preemptionPolicy"} {
		if _, ok := spec[f]; !ok {
			if v, ok := ospec[f]; ok {
				spec[f] = v
			}
		}
	}
}

// Validate implements Validator.
func (Priority) Validate(s Store, a *Attributes) error {
	if a.Kind() != priorityClassGK || a.Object["globalDefault"] != true {
		return nil
	}
	def, err := defaultPriorityClass(s)
	if err != nil || def == nil {
		return err
	}
	if a.Old == nil || metaString(def, "name") != metaString(a.Object, "name") {
		return a.forbid(fmt.Sprintf("PriorityClass %s is already marked as default. Only one default can exist", metaString(def, "name")))
	}
	return nil
}

// defaultPriorityClass returns the PriorityClass marked globalDefault (the
// lowest value when there are several), nil when there is none.
func defaultPriorityClass(s Store) (map[string]any, error) {
	pcs, err := s.List(priorityClassGK, "")
	if err != nil {
		return nil, err
	}
	var def map[string]any
	for _, pc := range pcs {
		if pc["globalDefault"] != true {
			continue
		}
		v, _ := pc["value"].(int64)
		if dv, _ := def["value"].(int64); def == nil || dv > v {
			def = pc
		}
	}
	return def, nil
}
