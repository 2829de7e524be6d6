package command

import (
	"errors"
	"testing"
)

// TestParse_RentalRef: every command about an existing rental takes its
// address (yolo@2026-10-30) where it takes its name, in canonical form;
// a new rental's or a volume's name does not.
func TestParse_RentalRef(t *testing.T) {
	ok := map[string]string{
		"/stop yolo@2026-10-30":                   `command.StopCmd {"Name":"yolo@2026-10-30","At":"0001-01-01T00:00:00Z"}`,
		"/release name=yolo@2026-10-30#1":         `command.ReleaseCmd {"Name":"yolo@2026-10-30","At":"0001-01-01T00:00:00Z"}`,
		"/why yolo@2026-10-30#2":                  `command.WhyCmd {"Name":"yolo@2026-10-30#2"}`,
		"/agent yolo@2026-11-01":                  `command.AgentCmd {"Name":"yolo@2026-11-01"}`,
		"/price yolo@2026-10-30 2.5/h":            "",
		"/traffic yolo@2026-10-30 price=0.8/GB":   "",
		"/charge yolo@2026-10-30 12 image":        "",
		"/storage d1 50GB rental=yolo@2026-10-30": "",
		"/autorelease yolo@2026-10-30 notify":     "",
		"/价格 yolo@2026-10-30 2.5元/小时":             "",
	}
	for in, want := range ok {
		c, err := Parse(in, testNow, shanghai)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if want != "" && show(c) != want {
			t.Errorf("Parse(%q) = %s\nwant %s", in, show(c), want)
		}
	}
	bad := map[string]string{
		"/stop yolo@2026-13-45":                    "bad_rental_ref",
		"/stop yolo@":                              "bad_rental_ref",
		"/price yolo@2026-10-30#0 2/h":             "bad_rental_ref",
		"/storage d1 50GB rental=yolo@2026-02-30":  "bad_rental_ref",
		"/charge yolo@20261030 12 fee":             "bad_rental_ref",
		"/stop yolo@2026-11-02":                    "ref_future", // testNow is Nov 1 in Shanghai
		"/rent yolo@2026-10-30 autodl 4090 1.88/h": "bad_name",
		"/storage d1@2026-10-30 50GB":              "bad_name",
	}
	for in, key := range bad {
		_, err := Parse(in, testNow, shanghai)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Key != key {
			t.Errorf("Parse(%q) = %v, want %s", in, err, key)
		}
	}
}
