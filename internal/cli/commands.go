package cli

import (
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
)

// This file is the whole command tree of konverge, in the groups of
// `kubectl --help`, then konverge's own commands. Each constructor lives in
// the file named after its command (get.go, rollout.go, create_*.go, ...);
// a command is added to konverge here and nowhere else.

// commandGroup is one heading of `kubectl --help` and its commands.
type commandGroup struct {
	title    string
	commands []*cobra.Command
}

// NewRootCmd returns the konverge command with all its subcommands.
func NewRootCmd(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "konverge",
		Short:         "Declarative apply engine for Kubernetes manifests",
		Long:          "konverge computes and applies what kubectl apply does: the three-way strategic merge between the last-applied configuration, your manifests and the live objects.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	g := &Globals{Streams: s}
	g.AddFlags(root)
	for _, group := range commandTree(g) {
		root.AddCommand(group.commands...)
	}
	closeAtEnd(g, root)
	return root
}

// commandTree lists konverge's commands and their subcommands. kubectl's
// commands that konverge does not have are named in comments where they
// would stand.
func commandTree(g *Globals) []commandGroup {
	return []commandGroup{
		{"Basic Commands (Beginner)", []*cobra.Command{
			withSub(NewCreateCmd(&WriteOptions{g: g}),
				newCreateNamespaceCmd(g),
				newCreateServiceAccountCmd(g),
				newCreateConfigMapCmd(g),
				withSub(newCreateSecretCmd(g),
					newCreateSecretGenericCmd(g),
					newCreateSecretTLSCmd(g),
					newCreateSecretDockerCmd(g)),
				newCreateDeploymentCmd(g),
				newCreateJobCmd(g),
				newCreateCronJobCmd(g),
				withSub(newCreateServiceCmd(g),
					newCreateServiceTypeCmd(g, corev1.ServiceTypeClusterIP),
					newCreateServiceTypeCmd(g, corev1.ServiceTypeNodePort),
					newCreateServiceTypeCmd(g, corev1.ServiceTypeLoadBalancer),
					newCreateServiceTypeCmd(g, corev1.ServiceTypeExternalName)),
				newCreateRoleCmd(g),
				newCreateClusterRoleCmd(g),
				newCreateRoleBindingCmd(g),
				newCreateClusterRoleBindingCmd(g),
				newCreatePriorityClassCmd(g),
				newCreateQuotaCmd(g),
				newCreatePDBCmd(g),
				newCreateIngressCmd(g)),
			newExposeCmd(g),
			newRunCmd(g),
			withSub(newSetCmd(g),
				newSetImageCmd(g),
				newSetResourcesCmd(g),
				newSetEnvCmd(g),
				newSetServiceAccountCmd(g),
				newSetSelectorCmd(g)),
		}},
		{"Basic Commands (Intermediate)", []*cobra.Command{
			newExplainCmd(g),
			NewGetCmd(&GetOptions{Globals: g}),
			NewEditCmd(&EditOptions{Globals: g}),
			NewDeleteCmd(&DeleteOptions{g: g}),
		}},
		{"Deploy Commands", []*cobra.Command{
			withSub(NewRolloutCmd(g),
				newRolloutStatusCmd(g),
				newRolloutHistoryCmd(g),
				newRolloutUndoCmd(g),
				newRolloutPauseResumeCmd(g, true),
				newRolloutPauseResumeCmd(g, false),
				newRolloutRestartCmd(g)),
			NewScaleCmd(&ScaleOptions{Globals: g}),
			newAutoscaleCmd(g),
		}},
		{"Cluster Management Commands", []*cobra.Command{
			// certificate, cluster-info, top
			newCordonCmd(g, true),
			newCordonCmd(g, false),
			newDrainCmd(g),
			newTaintCmd(g),
		}},
		{"Troubleshooting and Debugging Commands", []*cobra.Command{
			NewDescribeCmd(&DescribeOptions{Globals: g}),
			newLogsCmd(g),
			// attach, exec, port-forward, proxy, cp, auth, debug
			newEventsCmd(g),
		}},
		{"Advanced Commands", []*cobra.Command{
			NewDiffCmd(&DiffOptions{g: g}),
			NewApplyCmd(&ApplyOptions{g: g}),
			NewPatchCmd(&PatchOptions{Globals: g}),
			NewReplaceCmd(&WriteOptions{g: g, Replace: true}),
			NewWaitCmd(&WaitOptions{Globals: g, Timeout: 30 * time.Second}),
			newKustomizeCmd(g),
		}},
		{"Settings Commands", []*cobra.Command{
			NewLabelCmd(&LabelOptions{Globals: g, field: "labels"}),
			NewLabelCmd(&LabelOptions{Globals: g, field: "annotations"}),
			// completion is cobra's own
		}},
		{"Other Commands", []*cobra.Command{
			newAPIResourcesCmd(g),
			newAPIVersionsCmd(g),
			withSub(newConfigCmd(g),
				newConfigViewCmd(g),
				newConfigGetContextsCmd(g),
				newConfigCurrentContextCmd(g),
				newConfigUseContextCmd(g)),
			// kuberc, plugin
			newVersionCmd(g),
		}},
		{"konverge Commands", []*cobra.Command{
			NewMergeCmd(&MergeOptions{Streams: g.Streams}),
			withSub(newClusterCmd(),
				NewClusterInitCmd(&ClusterInitOptions{Globals: g}),
				NewClusterResetCmd(&ClusterInitOptions{Globals: g, Reset: true})),
			withSub(newClockCmd(g),
				newClockAdvanceCmd(g)),
		}},
	}
}

// withSub adds subs to cmd and returns it.
func withSub(cmd *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	cmd.AddCommand(subs...)
	return cmd
}
