package command

import (
	"errors"
	"testing"
)

// TestParse_Project: project=NAME (项目=NAME) on /rent, /storage and
// /charge is the record's project; a bad name is refused with its own
// key, and a volume's resize, delete or price change takes none.
func TestParse_Project(t *testing.T) {
	project := func(c Command) string {
		switch c := c.(type) {
		case RentCmd:
			return c.Project
		case StorageCreateCmd:
			return c.Project
		case ChargeCmd:
			return c.Project
		}
		return "?"
	}
	for _, tc := range []struct{ in, want string }{
		{"/rent box1 autodl 4090 1.88/h project=yolo-v9", "yolo-v9"},
		{"/rent box1 autodl 4090 1.88/h 项目=视觉", "视觉"},
		{"/rent box1 autodl 4090 1.88/h", ""},
		{"/storage data 100GB price=0.01/GB/day project=llm", "llm"},
		{"/charge box1 5 image pull project=yolo-v9", "yolo-v9"},
		{"/charge box1 5 项目=yolo-v9 镜像", "yolo-v9"},
	} {
		c, err := Parse(tc.in, testNow, shanghai)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := project(c); got != tc.want {
			t.Errorf("Parse(%q) project = %q, want %q", tc.in, got, tc.want)
		}
	}
	if c, _ := Parse("/charge box1 5 image pull project=llm", testNow, shanghai); c != nil && c.(ChargeCmd).Note != "image pull" {
		t.Errorf("project= stayed in the note: %q", c.(ChargeCmd).Note)
	}
	for _, in := range []string{
		"/rent box1 autodl 4090 1.88/h project=",
		"/rent box1 autodl 4090 1.88/h project=-yolo",
		"/rent box1 autodl 4090 1.88/h project=a/b",
		"/charge box1 5 project=abcdefghijklmnopqrstuvwxyz0123456789",
		"/storage data 100GB price=0.01/GB/day project=yo!lo",
	} {
		_, err := Parse(in, testNow, shanghai)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Key != "bad_project" {
			t.Errorf("Parse(%q) = %v, want the bad_project refusal", in, err)
		}
	}
	for _, in := range []string{"/storage data resize 200GB project=llm", "/storage data delete project=llm", "/storage data price=0.02/GB/day project=llm"} {
		if c, err := Parse(in, testNow, shanghai); err == nil {
			t.Errorf("Parse(%q) = %#v, want a refusal: only a new volume takes a project", in, c)
		}
	}
}
