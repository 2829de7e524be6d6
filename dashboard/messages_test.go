package dashboard

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/chat"
)

// TestMessages: every message exists in both languages with the same
// arguments, and every key the code refers to is in the catalog.
func TestMessages(t *testing.T) {
	for _, err := range messages.Check() {
		t.Error(err)
	}
	files, _ := filepath.Glob("*.go")
	// fail(w, r, status, "code", "key", ...), loginPage(w, r, status, "key"), &authError{"code", "key"}
	use := regexp.MustCompile(`(?:fail\(w, r, [^,]+, "[a-z_]+", |loginPage\(w, r, [^,]+, |authError\{"[a-z_]+", )"([a-z_]+)"`)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range use.FindAllStringSubmatch(string(src), -1) {
			n++
			if _, ok := messages[m[1]]; !ok {
				t.Errorf("%s: message %q is not in the catalog", f, m[1])
			}
		}
	}
	if n < 20 {
		t.Errorf("found only %d message uses; the pattern no longer matches the code", n)
	}
	if got := messages.Text(chat.LangZH, "err_too_large", 8192); !strings.Contains(got, "8192") {
		t.Errorf("zh err_too_large = %q", got)
	}
}
