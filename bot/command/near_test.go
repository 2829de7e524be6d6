package command

import (
	"slices"
	"testing"
)

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"autodl", "autodl", 0},
		{"AutoDL", "autodl", 0},
		{"autdl", "autodl", 1},   // a deletion
		{"stauts", "status", 1},  // neighbours swapped
		{"runpd", "runpod", 1},   // a deletion
		{"lamdba", "lambda", 1},  // neighbours swapped
		{"vastai", "vast.ai", 1}, // an insertion
		{"box2", "box1", 1},      // a substitution
		{"ca", "abc", 3},         // optimal string alignment: no edit of a swapped pair
		{"nosuch", "box1", 5},
		{"恒源", "恒源云", 1},
		{"", "abc", 3},
	}
	for _, tc := range tests {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := editDistance(tc.b, tc.a); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	tests := []struct {
		typed string
		cands []string
		want  []string
	}{
		{"autdl", []string{"runpod", "autodl", "vast"}, []string{"autodl"}},
		{"box3", []string{"box1", "data1", "box2"}, []string{"box1", "box2"}},
		{"Box1", []string{"box1"}, []string{"box1"}},         // case only
		{"c3", []string{"c1", "c2"}, nil},                    // too short to guess
		{"nosuch", []string{"box1", "autodl", "data1"}, nil}, // nothing near
		{"autodl", []string{"autodl"}, nil},                  // itself is no suggestion
		{"lambdalab", []string{"lambda", "lambdalabs"}, []string{"lambdalabs"}},
		{"gpushar", []string{"gpushare", "GPUSHARE"}, []string{"gpushare"}}, // kept once
		{"a1b2c3d", []string{"a1", "a2", "a3", "a1b2c3e", "a1b2c3f", "a1b2c3g", "a1b2c3h"}, []string{"a1b2c3e", "a1b2c3f", "a1b2c3g"}},
	}
	for _, tc := range tests {
		if got := Nearest(tc.typed, tc.cands); !slices.Equal(got, tc.want) {
			t.Errorf("nearest(%q, %q) = %q, want %q", tc.typed, tc.cands, got, tc.want)
		}
	}
}

func TestNearCommands(t *testing.T) {
	tests := []struct {
		head string
		want []string
	}{
		{"stauts", []string{"status"}},
		{"relase", []string{"release"}},
		{"stat", []string{"status", "start"}},
		{"Stauts", []string{"status"}},
		{"xyzzy", nil},
	}
	for _, tc := range tests {
		if got := NearCommands(tc.head); !slices.Equal(got, tc.want) {
			t.Errorf("nearCommands(%q) = %q, want %q", tc.head, got, tc.want)
		}
	}
}

func TestNearPlatforms(t *testing.T) {
	if got := NearPlatforms("autdl", nil); !slices.Equal(got, []string{"autodl"}) {
		t.Errorf("nearPlatforms(autdl) = %q", got)
	}
	// An alias suggests its profile's key.
	if got := NearPlatforms("aliyn", nil); !slices.Equal(got, []string{"alibaba"}) {
		t.Errorf("nearPlatforms(aliyn) = %q", got)
	}
	if got := NearPlatforms("mycluter", []string{"mycluster"}); !slices.Equal(got, []string{"mycluster"}) {
		t.Errorf("nearPlatforms(mycluter) = %q", got)
	}
	if got := NearPlatforms("homelab", nil); len(got) != 0 {
		t.Errorf("nearPlatforms(homelab) = %q, want none", got)
	}
}
