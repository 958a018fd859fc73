package statefulset

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/konverge/konverge/cluster"
	"github.com/konverge/konverge/controller/event"
	"github.com/konverge/konverge/controller/internal/kobj"
	"github.com/konverge/konverge/value"
)

// The pod and claim operations of StatefulPodControl, with its events.

// title is cases.Title for the verbs the controller uses.
func title(verb string) string {
	if verb == "" {
		return verb
	}
	return strings.ToUpper(verb[:1]) + verb[1:]
}

// recordPod records "<Verb> Pod <pod> in StatefulSet <set> successful" or
// its failure.
func (s *syncer) recordPod(ctx context.Context, verb string, pod map[string]any, err error) {
	var rerr error
	if err == nil {
		rerr = s.record(ctx, event.Normal, "Successful"+title(verb),
			fmt.Sprintf("%s Pod %s in StatefulSet %s successful", title(verb), kobj.Name(pod), kobj.Name(s.set)))
	} else {
		rerr = s.record(ctx, event.Warning, "Failed"+title(verb),
			fmt.Sprintf("%s Pod %s in StatefulSet %s failed error: %s", title(verb), kobj.Name(pod), kobj.Name(s.set), err))
	}
	_ = rerr // an event that cannot be written is not retried
}

func (s *syncer) recordClaim(ctx context.Context, verb string, pod map[string]any, claimName string, err error) {
	if err == nil {
		_ = s.record(ctx, event.Normal, "Successful"+title(verb),
			fmt.Sprintf("%s Claim %s Pod %s in StatefulSet %s success", title(verb), claimName, kobj.Name(pod), kobj.Name(s.set)))
		return
	}
	_ = s.record(ctx, event.Warning, "Failed"+title(verb),
		fmt.Sprintf("%s Claim %s for Pod %s in StatefulSet %s failed error: %s", title(verb), claimName, kobj.Name(pod), kobj.Name(s.set), err))
}

// createPod is CreateStatefulPod: the claims first, then the pod, then the
// claims' owners as the retention policy says. It returns the stored pod
// (nil when it could not be created).
func (s *syncer) createPod(ctx context.Context, pod map[string]any) (map[string]any, error) {
	if err := s.createClaims(ctx, s.set, pod); err != nil {
		s.recordPod(ctx, "create", pod, err)
		return nil, err
	}
	created, err := s.c.Create(ctx, pod)
	if cluster.IsAlreadyExists(err) {
		s.changed = true
		return nil, err
	}
	if err == nil {
		s.changed = true
		s.created++
		if err := s.updateClaimsForPolicy(ctx, s.set, created); err != nil {
			s.recordPod(ctx, "update", pod, err)
			return created, err
		}
	}
	s.recordPod(ctx, "create", pod, err)
	if err != nil {
		return nil, err
	}
	return created, nil
}

// deletePod is DeleteStatefulPod.
func (s *syncer) deletePod(ctx context.Context, pod map[string]any) error {
	err := s.c.Delete(ctx, kobj.PodGVK, kobj.Namespace(pod), kobj.Name(pod))
	if err != nil && !cluster.IsNotFound(err) {
		s.recordPod(ctx, "delete", pod, err)
		return err
	}
	s.changed = true
	s.deleted++
	s.recordPod(ctx, "delete", pod, nil)
	return nil
}

// updatePod is UpdateStatefulPod: identity, storage and claim owners.
func (s *syncer) updatePod(ctx context.Context, set, pod map[string]any) error {
	consistent := true
	if !identityMatches(set, pod) {
		name := podName(set, ordinalOf(pod))
		md := kobj.EnsureMap(pod, "metadata")
		md["name"] = name
		md["namespace"] = kobj.Namespace(set)
		labels := kobj.EnsureMap(pod, "metadata", "labels")
		labels[PodNameLabel] = name
		labels[PodIndexLabel] = fmt.Sprint(ordinalOf(pod))
		consistent = false
	}
	if !storageMatches(set, pod) {
		updateStorage(set, pod)
		consistent = false
		if err := s.createClaims(ctx, set, pod); err != nil {
			s.recordPod(ctx, "update", pod, err)
			return err
		}
	}
	match, err := s.claimsMatchPolicy(ctx, set, pod)
	if err != nil {
		s.recordPod(ctx, "update", pod, err)
		return err
	}
	if !match {
		if err := s.updateClaimsForPolicy(ctx, set, pod); err != nil {
			s.recordPod(ctx, "update", pod, err)
			return err
		}
		consistent = false
	}
	if consistent {
		return nil
	}
	_, err = s.c.Update(ctx, pod)
	if err == nil || cluster.IsConflict(err) || cluster.IsNotFound(err) {
		s.changed = true
	}
	s.recordPod(ctx, "update", pod, err)
	return err
}

// claimsOf returns the claims the pod of set should have: one per
// template, named `<template>-<set>-<ordinal>`, labelled with the
// template's labels and the selector's matchLabels.
func claimsOf(set, pod map[string]any) []map[string]any {
	ordinal := ordinalOf(pod)
	var out []map[string]any
	for _, t := range kobj.Slice(set, "spec", "volumeClaimTemplates") {
		tm, _ := t.(map[string]any)
		c := kobj.Copy(tm)
		md := kobj.EnsureMap(c, "metadata")
		md["name"] = claimName(set, tm, ordinal)
		md["namespace"] = kobj.Namespace(set)
		labels, _ := md["labels"].(map[string]any)
		match := kobj.Map(set, "spec", "selector", "matchLabels")
		if labels != nil {
			for k, v := range match {
				labels[k] = v
			}
		} else if len(match) > 0 {
			md["labels"] = value.DeepCopy(match)
		}
		c["apiVersion"] = "v1"
		c["kind"] = "PersistentVolumeClaim"
		delete(c, "status")
		out = append(out, c)
	}
	return out
}

// createClaims is createPersistentVolumeClaims.
func (s *syncer) createClaims(ctx context.Context, set, pod map[string]any) error {
	var errs []error
	for _, c := range claimsOf(set, pod) {
		ns, name := kobj.Namespace(c), kobj.Name(c)
		existing, err := s.claim(ctx, ns, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to retrieve PVC %s: %w", name, err))
			s.recordClaim(ctx, "create", pod, name, err)
			continue
		}
		if existing != nil {
			if kobj.Deleting(existing) {
				errs = append(errs, fmt.Errorf("pvc %s is being deleted", name))
			}
			continue
		}
		created, err := s.c.Create(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("failed to create PVC %s: %w", name, err))
		} else {
			s.claims[nsName{ns, name}] = created
			s.changed = true
		}
		if err == nil || !cluster.IsAlreadyExists(err) {
			s.recordClaim(ctx, "create", pod, name, err)
		}
	}
	return errors.Join(errs...)
}

// The retention policy, as owner references on the claims.

func (s *syncer) policy(set map[string]any) (whenScaled, whenDeleted string) {
	p := readSpec(set)
	return p.whenScaled, p.whenDeleted
}

func refMatches(ref map[string]any, obj map[string]any, apiVersion, kind string) bool {
	return ref["apiVersion"] == apiVersion && ref["kind"] == kind && ref["name"] == kobj.Name(obj)
}

func refs(obj map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range kobj.Slice(obj, "metadata", "ownerReferences") {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func hasOwnerRef(target, owner map[string]any) bool {
	uid := kobj.UID(owner)
	for _, r := range refs(target) {
		if r["uid"] == uid {
			return true
		}
	}
	return false
}

func hasStaleOwnerRef(target, owner map[string]any, apiVersion, kind string) bool {
	for _, r := range refs(target) {
		if refMatches(r, owner, apiVersion, kind) {
			return r["uid"] != kobj.UID(owner)
		}
	}
	return false
}

func (s *syncer) hasUnexpectedController(claim, set, pod map[string]any) bool {
	whenScaled, whenDeleted := s.policy(set)
	if whenScaled == "Retain" && whenDeleted == "Retain" {
		return false
	}
	for _, r := range refs(claim) {
		if refMatches(r, set, "apps/v1", "StatefulSet") {
			if r["uid"] != kobj.UID(set) {
				return true
			}
			continue
		}
		if refMatches(r, pod, "v1", "Pod") {
			if r["uid"] != kobj.UID(pod) {
				return true
			}
			continue
		}
		if b, _ := r["controller"].(bool); b {
			return true
		}
	}
	return false
}

func hasNonControllerOwner(claim, set, pod map[string]any) bool {
	for _, r := range refs(claim) {
		if r["uid"] == kobj.UID(set) || r["uid"] == kobj.UID(pod) {
			if b, _ := r["controller"].(bool); !b {
				return true
			}
		}
	}
	return false
}

func (s *syncer) inRange(set, pod map[string]any) bool {
	sp := readSpec(set)
	o := ordinalOf(pod)
	return o >= sp.start && o <= sp.start+sp.replicas-1
}

// claimOwnerUpToDate is isClaimOwnerUpToDate.
func (s *syncer) claimOwnerUpToDate(claim, set, pod map[string]any) bool {
	if hasStaleOwnerRef(claim, set, "apps/v1", "StatefulSet") || hasStaleOwnerRef(claim, pod, "v1", "Pod") {
		return true
	}
	if s.hasUnexpectedController(claim, set, pod) {
		return !(hasOwnerRef(claim, set) || hasOwnerRef(claim, pod))
	}
	if hasNonControllerOwner(claim, set, pod) {
		return false
	}
	whenScaled, whenDeleted := s.policy(set)
	scaledDown := !s.inRange(set, pod)
	switch {
	case whenScaled == "Retain" && whenDeleted == "Delete":
		return hasOwnerRef(claim, set) && !hasOwnerRef(claim, pod)
	case whenScaled == "Delete" && whenDeleted == "Retain":
		if hasOwnerRef(claim, set) {
			return false
		}
		return scaledDown == hasOwnerRef(claim, pod)
	case whenScaled == "Delete" && whenDeleted == "Delete":
		if scaledDown == hasOwnerRef(claim, set) {
			return false
		}
		return scaledDown == hasOwnerRef(claim, pod)
	default:
		return !hasOwnerRef(claim, set) && !hasOwnerRef(claim, pod)
	}
}

// claimsMatchPolicy is ClaimsMatchRetentionPolicy.
func (s *syncer) claimsMatchPolicy(ctx context.Context, set, pod map[string]any) (bool, error) {
	ordinal := ordinalOf(pod)
	for _, t := range kobj.Slice(set, "spec", "volumeClaimTemplates") {
		tm, _ := t.(map[string]any)
		name := claimName(set, tm, ordinal)
		c, err := s.claim(ctx, kobj.Namespace(set), name)
		if err != nil {
			//lint:ignore ST1005 kube-controller-manager's message, word for word
			return false, fmt.Errorf("Could not retrieve claim %s for %s when checking PVC deletion policy: %w", name, kobj.Name(pod), err)
		}
		if c != nil && !s.claimOwnerUpToDate(c, set, pod) {
			return false, nil
		}
	}
	return true, nil
}

// updateClaimsForPolicy is UpdatePodClaimForRetentionPolicy.
func (s *syncer) updateClaimsForPolicy(ctx context.Context, set, pod map[string]any) error {
	ordinal := ordinalOf(pod)
	for _, t := range kobj.Slice(set, "spec", "volumeClaimTemplates") {
		tm, _ := t.(map[string]any)
		name := claimName(set, tm, ordinal)
		c, err := s.claim(ctx, kobj.Namespace(set), name)
		if err != nil {
			//lint:ignore ST1005 kube-controller-manager's message, word for word
			return fmt.Errorf("Could not retrieve claim %s not found for %s when checking PVC deletion policy: %w", name, kobj.Name(pod), err)
		}
		if c == nil {
			continue
		}
		if s.hasUnexpectedController(c, set, pod) {
			_ = s.record(ctx, event.Warning, "ConflictingController",
				fmt.Sprintf("PersistentVolumeClaim %s has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim", name))
		}
		if s.claimOwnerUpToDate(c, set, pod) {
			continue
		}
		next := kobj.Copy(c)
		s.setClaimOwners(next, set, pod)
		updated, err := s.c.Update(ctx, next)
		if err != nil {
			return fmt.Errorf("could not update claim %s for delete policy ownerRefs: %w", name, err)
		}
		s.claims[nsName{kobj.Namespace(c), name}] = updated
		s.changed = true
	}
	return nil
}

// setClaimOwners is updateClaimOwnerRefForSetAndPod.
func (s *syncer) setClaimOwners(claim, set, pod map[string]any) {
	unexpected := s.hasUnexpectedController(claim, set, pod)
	var kept []any
	for _, r := range refs(claim) {
		if !refMatches(r, set, "apps/v1", "StatefulSet") && !refMatches(r, pod, "v1", "Pod") {
			kept = append(kept, r)
		}
	}
	add := func(owner map[string]any, apiVersion, kind string) {
		for _, r := range kept {
			if m, _ := r.(map[string]any); m["uid"] == kobj.UID(owner) {
				return
			}
		}
		ref := map[string]any{
			"apiVersion": apiVersion, "kind": kind, "name": kobj.Name(owner), "uid": kobj.UID(owner),
			"controller": true, "blockOwnerDeletion": true,
		}
		kept = append(kept, ref)
	}
	if !unexpected {
		whenScaled, whenDeleted := s.policy(set)
		scaledDown := !s.inRange(set, pod)
		switch {
		case whenScaled == "Retain" && whenDeleted == "Delete":
			add(set, "apps/v1", "StatefulSet")
		case whenScaled == "Delete" && whenDeleted == "Retain":
			if scaledDown {
				add(pod, "v1", "Pod")
			}
		case whenScaled == "Delete" && whenDeleted == "Delete":
			if scaledDown {
				add(pod, "v1", "Pod")
			} else {
				add(set, "apps/v1", "StatefulSet")
			}
		}
	}
	md := kobj.EnsureMap(claim, "metadata")
	if len(kept) == 0 {
		delete(md, "ownerReferences")
	} else {
		md["ownerReferences"] = kept
	}
}

// claimIsStale is PodClaimIsStale: under whenScaled Delete, a claim owned
// by an earlier pod of the same name blocks the pod's creation.
func (s *syncer) claimIsStale(ctx context.Context, pod map[string]any) (bool, error) {
	if whenScaled, _ := s.policy(s.set); whenScaled == "Retain" {
		return false, nil
	}
	for _, c := range claimsOf(s.set, pod) {
		existing, err := s.claim(ctx, kobj.Namespace(c), kobj.Name(c))
		if err != nil {
			return false, err
		}
		if existing != nil && hasStaleOwnerRef(existing, pod, "v1", "Pod") {
			return true, nil
		}
	}
	return false, nil
}
