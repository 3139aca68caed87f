package kubernetes

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ratelab/ratelab/experiments/document"
)

// decodeStrict reads one manifest into the API type its apiVersion and
// kind name, refusing unknown and duplicate fields.
func decodeStrict(t *testing.T, file string, into any, apiVersion, kind string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(data, &tm); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if tm.APIVersion != apiVersion || tm.Kind != kind {
		t.Fatalf("%s: %s %s, want %s %s", file, tm.APIVersion, tm.Kind, apiVersion, kind)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// Every YAML file here is one of the manifests the test knows.
func TestNoOtherManifests(t *testing.T) {
	files, _ := filepath.Glob("*.yaml")
	slices.Sort(files)
	if want := []string{"configmap.yaml", "merge-job.yaml", "pvc.yaml", "shards-job.yaml"}; !slices.Equal(files, want) {
		t.Errorf("manifests %v, want %v (add a new one to this test)", files, want)
	}
}

// The manifests decode strictly and fit together: the Indexed Job's pods
// run lab run --shard K/N with K their completion index and N the Job's
// completions, into /shards/K on the shared claim; the merge Job reads
// exactly /shards/0 .. /shards/N-1; the ConfigMap holds a valid sweep.
func TestManifests(t *testing.T) {
	var cm corev1.ConfigMap
	decodeStrict(t, "configmap.yaml", &cm, "v1", "ConfigMap")
	var pvc corev1.PersistentVolumeClaim
	decodeStrict(t, "pvc.yaml", &pvc, "v1", "PersistentVolumeClaim")
	var shards, merge batchv1.Job
	decodeStrict(t, "shards-job.yaml", &shards, "batch/v1", "Job")
	decodeStrict(t, "merge-job.yaml", &merge, "batch/v1", "Job")

	if _, err := document.DecodeConfig([]byte(cm.Data["sweep.json"])); err != nil {
		t.Errorf("configmap.yaml: sweep.json: %v", err)
	}
	if !slices.Contains(pvc.Spec.AccessModes, corev1.ReadWriteMany) {
		t.Errorf("pvc.yaml: access modes %v: the shards write from several nodes (ReadWriteMany)", pvc.Spec.AccessModes)
	}

	s := shards.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("shards-job.yaml: completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Parallelism != *s.Completions {
		t.Fatalf("shards-job.yaml: completions %v, parallelism %v: want them equal", s.Completions, s.Parallelism)
	}
	n := int(*s.Completions)
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("shards-job.yaml: restartPolicy %q, want Never", pod.RestartPolicy)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("shards-job.yaml: %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if got := env["SHARD"]; got != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("shards-job.yaml: SHARD from %q, want the completion index annotation", got)
	}
	args := strings.Join(append(slices.Clone(c.Command), c.Args...), " ")
	want := fmt.Sprintf("lab run -q --config /config/sweep.json --shard $(SHARD)/%d --out /shards/$(SHARD)", n)
	if args != want {
		t.Errorf("shards-job.yaml: runs %q, want %q", args, want)
	}
	mounts := func(file string, spec corev1.PodSpec, cont corev1.Container) map[string]corev1.Volume {
		byName := map[string]corev1.Volume{}
		for _, v := range spec.Volumes {
			byName[v.Name] = v
		}
		out := map[string]corev1.Volume{}
		for _, m := range cont.VolumeMounts {
			v, ok := byName[m.Name]
			if !ok {
				t.Errorf("%s: mount %s names no volume", file, m.Name)
			}
			out[m.MountPath] = v
		}
		return out
	}
	m := mounts("shards-job.yaml", pod, c)
	if v := m["/config"]; v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Errorf("shards-job.yaml: /config is not the ConfigMap %s", cm.Name)
	}
	if v := m["/shards"]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Errorf("shards-job.yaml: /shards is not the claim %s", pvc.Name)
	}

	mpod := merge.Spec.Template.Spec
	if len(mpod.Containers) != 1 {
		t.Fatalf("merge-job.yaml: %d containers, want 1", len(mpod.Containers))
	}
	mc := mpod.Containers[0]
	wantMerge := []string{"lab", "merge", "--out", "/shards/merged"}
	for k := range n {
		wantMerge = append(wantMerge, fmt.Sprintf("/shards/%d", k))
	}
	if got := append(slices.Clone(mc.Command), mc.Args...); !slices.Equal(got, wantMerge) {
		t.Errorf("merge-job.yaml: runs %q, want %q", got, wantMerge)
	}
	if v := mounts("merge-job.yaml", mpod, mc)["/shards"]; v.PersistentVolumeClaim == nil || v.PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Errorf("merge-job.yaml: /shards is not the claim %s", pvc.Name)
	}
	if c.Image != mc.Image {
		t.Errorf("the shards run %s, the merge %s", c.Image, mc.Image)
	}
}

// Strict decoding is strict: a misspelt field or a key given twice is
// refused, so the test above cannot pass over a typo.
func TestDecodingIsStrict(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completionMod: Indexed\n",
		"apiVersion: batch/v1\nkind: Job\nspec:\n  completions: 4\n  completions: 5\n",
	} {
		var j batchv1.Job
		if err := yaml.UnmarshalStrict([]byte(doc), &j); err == nil {
			t.Errorf("accepted %q", doc)
		}
	}
}
