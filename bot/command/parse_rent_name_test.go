package command

import (
	"errors"
	"strings"
	"testing"
)

// TestParse_RentNameShapedLikeAField: the help says /rent NAME PLATFORM
// GPU PRICE, so a first word shaped like a GPU, a platform or a mode is the
// rental's name when the message gives that field again. A box called t4
// was refused with "GPU is given twice".
func TestParse_RentNameShapedLikeAField(t *testing.T) {
	for _, tt := range []struct {
		in, name, platform, gpu, mode string
	}{
		{"/rent t4 autodl 4090 1.88/h", "t4", "autodl", "RTX 4090", ""},
		{"/rent a10 lambda A100 1.29/h", "a10", "lambda", "A100", ""},
		{"/rent v100 autodl gpu=4090 1.88/h", "v100", "autodl", "RTX 4090", ""},
		{"/rent L4 runpod 4090 0.69/h", "L4", "runpod", "RTX 4090", ""},
		{"/rent runpod runpod 4090 0.69/h", "runpod", "runpod", "RTX 4090", ""},
		{"/rent lambda runpod 4090 0.69/h", "lambda", "runpod", "RTX 4090", ""},
		{"/rent vast platform=runpod 4090 0.69/h", "vast", "runpod", "RTX 4090", ""},
		{"/rent hourly autodl 4090 1.88/h per-second", "hourly", "autodl", "RTX 4090", "per-second"},
		{"/租 t4 autodl 4090 1.88元/小时", "t4", "autodl", "RTX 4090", ""},
		{"/rent 阿里云 autodl 4090 每小时 1.88", "阿里云", "autodl", "RTX 4090", ""},
		{"/租用 按秒 autodl 4090 1.88元/小时 按小时", "按秒", "autodl", "RTX 4090", "per-hour"},
		// The forms that already worked keep their meaning.
		{"/rent box1 autodl t4 0.5/h", "box1", "autodl", "T4", ""},
		{"/rent autodl box1 4090 1.88/h", "box1", "autodl", "RTX 4090", ""},
	} {
		t.Run(tt.in, func(t *testing.T) {
			c, err := Parse(tt.in, testNow, shanghai)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			r, ok := c.(RentCmd)
			if !ok {
				t.Fatalf("Parse(%q) = %s, want a RentCmd", tt.in, show(c))
			}
			if r.Name != tt.name || r.GPU != tt.gpu || (tt.platform != "" && r.Platform != tt.platform) {
				t.Errorf("Parse(%q) = %s, want name %q platform %q GPU %q", tt.in, show(c), tt.name, tt.platform, tt.gpu)
			}
			if tt.mode != "" && string(r.Mode) != tt.mode {
				t.Errorf("Parse(%q) mode %q, want %q", tt.in, r.Mode, tt.mode)
			}
		})
	}
	// Without a second GPU the word is the GPU, and the name is missing; a
	// GPU given twice after the name is still refused.
	for _, tt := range []struct{ in, key string }{
		{"/rent t4 autodl 1.88/h", "missing_name"},
		{"/rent box1 t4 autodl 4090 1.88/h", "twice"},
		{"/rent t4 a10 autodl 4090 1.88/h", "twice"},
	} {
		_, err := Parse(tt.in, testNow, shanghai)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Key != tt.key {
			t.Errorf("Parse(%q) error %v, want %s", tt.in, err, tt.key)
		}
	}
}

// TestParse_GPUNamedRentalInOtherCommands: a rental called like a GPU is
// a name to every command but /rent; "/traffic t4 10GB" joined "t4 10GB"
// into one GPU ("T4 10GB", as "A100 80GB") and refused it as a traffic
// without an amount.
func TestParse_GPUNamedRentalInOtherCommands(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/traffic t4 10GB", `command.TrafficUsageCmd {"Name":"t4","SizeGB":"10","Direction":"out"`},
		{"/traffic a100 80GB in", `command.TrafficUsageCmd {"Name":"a100","SizeGB":"80","Direction":"in"`},
		{"/traffic a10 price=0.8/GB free=100GB", `command.TrafficTermsCmd {"Name":"a10","PricePerGB":"0.8"`},
		{"/price l4 2 /h", `command.PriceCmd {"Name":"l4","Price":{"Amount":"2","Unit":"hour"`},
	} {
		c, err := Parse(tt.in, testNow, shanghai)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := show(c); !strings.HasPrefix(got, tt.want) {
			t.Errorf("Parse(%q) = %s, want %s…", tt.in, got, tt.want)
		}
	}
}
