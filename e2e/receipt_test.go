package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/dashboard/dashtest"
)

// The receipt's hand-made RTX 4090 bench (the simulate file's "bench"
// object) and the price the user gives the rental in the chat. ¥36/h is a
// cent a second, and 36 ÷ 160 tensor TFLOPS is exactly ¥0.225 per
// tensor-TFLOP-hour, so every figure below is computed by hand without
// rounding questions.
const (
	receiptPrice   = "36"  // ¥ per hour, typed with /adopt
	receiptTensor  = 160.0 // bf16 and fp16 TFLOPS of the bench
	receiptPerUnit = "¥0.225"
	receiptLabel   = "e2e-epoch"
)

// bench4090 is a healthy-looking RTX 4090 as the bench would measure it
// (datasheet: 165.2 dense bf16/fp16 TFLOPS, 82.6 FP32, 1008 GB/s, PCIe
// 4.0 x16, 450 W), on a host with a fast disk and 16 cores.
const bench4090 = `{"started_at": "2026-11-20T04:00:00Z", "wall_s": 1.2, "gpu_s": 0.9, "source": "simulate",
 "driver_version": "580.95.05", "cuda_driver_version": "13.0",
 "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 4090", "model": "RTX 4090", "uuid": "GPU-e2e-4090", "compute_capability": "8.9",
  "fp32_tflops": 80, "bf16_tflops": 160, "fp16_tflops": 160, "mem_gbps": 950, "h2d_gbps": 24.5, "d2h_gbps": 25.1,
  "memory_total_mib": 24564, "pcie_gen": 4, "pcie_gen_max": 4, "pcie_width": 16, "pcie_width_max": 16,
  "power_limit_w": 450, "power_default_w": 450, "sm_clock_max_mhz": 2520, "ecc": false, "temperature_c": 45}],
 "host": {"cpu_cores": 16, "cpu_model": "AMD EPYC 7B13", "memory_mib": 64000, "disk_path": "/root", "disk_write_mbps": 1800, "disk_read_mbps": 2100}}`

// setSim4090 writes the agent's simulate file: one idle RTX 4090 (the
// bench runs only on a GPU nobody uses), the claimed boot, and the bench
// the agent's "bench --simulate" child returns.
func (a *enrolAgent) setSim4090(t *testing.T, bootedAt time.Time, bench string) {
	t.Helper()
	b := fmt.Sprintf(`{"gpus": [{"name": "NVIDIA GeForce RTX 4090", "uuid": "GPU-%s-0", "memory_total_mib": 24564, "memory_used_mib": 0, "utilization": 0, "power_w": 20, "temperature_c": 35}],
 "host": {"cpu_percent": 1, "net_bytes_per_s": 0}, "booted_at": %q, "bench": %s}`, a.name, bootedAt.UTC().Format(time.RFC3339), bench)
	tmp := a.sim + ".tmp"
	if err := os.WriteFile(tmp, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, a.sim); err != nil {
		t.Fatal(err)
	}
}

// binding reads the rental token the agent saved once its instance was
// logged.
func (a *enrolAgent) binding(t *testing.T, timeout time.Duration) (rental, token string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		b, err := os.ReadFile(filepath.Join(a.stateDir, "binding.json"))
		if err == nil {
			var v struct{ Rental, Token string }
			if json.Unmarshal(b, &v) == nil && v.Token != "" {
				return v.Rental, v.Token
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent %s saved no rental token within %s", a.name, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// adoptAt logs the instance of a "New instance" card at price through
// [Other price] and /adopt ID PRICE, as a user would.
func (w *world) adoptAt(t *testing.T, card tgfake.Message, price string) {
	t.Helper()
	n := len(w.fake.Messages(userID))
	w.press(t, card, fragBtnOtherPrice)
	help := w.waitText(t, n, 20*time.Second, fragAdoptHelp)
	m := regexp.MustCompile(`/adopt (\d+) `).FindStringSubmatch(help.Text)
	if m == nil {
		t.Fatalf("no instance ID in %q", help.Text)
	}
	w.fake.SendText(userID, userID, "/adopt "+m[1]+" "+price+"/h")
}

// exportAsOf is the JSON export with charges as of at.
func (w *world) exportAsOf(t *testing.T, at time.Time) map[string]any {
	t.Helper()
	cmd := exec.Command(w.server, "export", "--format", "json", "--user", fmt.Sprint(userID), "--as-of", at.UTC().Format(time.RFC3339))
	cmd.Env = append(os.Environ(), "GPULEDGER_DB="+w.db)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("export --as-of: %v", err)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("export output: %v\n%s", err, out)
	}
	return v
}

// postBench sends body to the hub's bench door with token, as any holder
// of the token can, and returns the status and the decoded answer.
func (w *world) postBench(t *testing.T, token string, body []byte) (int, wire.BenchResponse, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+w.addr+wire.PathBench, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var raw bytes.Buffer
	raw.ReadFrom(res.Body)
	var a wire.BenchResponse
	json.Unmarshal(raw.Bytes(), &a)
	return res.StatusCode, a, raw.String()
}

// jobCost is what a span of d costs at ¥36/h by the second: d × 36/3600,
// rounded to the fen, half away from zero (the ledger's rounding).
func jobCost(d time.Duration) string {
	r := new(big.Rat).Mul(big.NewRat(d.Nanoseconds(), 1e9), big.NewRat(36, 3600))
	// Half away from zero to 2 decimals: FloatString rounds half away.
	return r.FloatString(2)
}

// TestReceipt runs the real server and agent binaries against the fake
// Bot API: an agent enrolled on AutoDL is logged from the chat at ¥36/h;
// once it holds its rental's token the server asks it for a bench, its
// bench child (bench --json --simulate) measures the hand-made RTX 4090
// above and the receipt card comes with the figures and ¥0.225 per
// tensor-TFLOP-hour; a job wrapped with --label shows in /compare with
// its time and money by hand; /quote 4090 10 is ten hours at the price.
// And a forged bench of 1e9 TFLOPS sent with a rental's token is bounded:
// the answer names the figure, the receipt shows it not measured, and no
// money moves.
func TestReceipt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server and two agents for about half a minute; run without -short")
	}
	w := newEnrolWorld(t)
	agents := newEnrolAgents(t, w)
	tok := w.enrolToken(t)
	boot := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Minute)

	const uuid = "5e1f0a2b-9c3d-4e5f-8a7b-6c5d4e3f2a10"
	const rental = "autodl-5e1f0a"
	before := len(w.fake.Messages(userID))
	a := agents.add(t, "box", []string{"AutoDLContainerUUID=" + uuid}, []string{"--token", tok})
	a.setSim4090(t, boot, bench4090)
	a.start(t)
	card := w.waitText(t, before, 30*time.Second, fragNewInstance+"autodl", uuid[:6])
	w.adoptAt(t, card, receiptPrice)
	w.waitText(t, before, 20*time.Second, fragLoggedAs+rental)
	a.binding(t, 10*time.Second)

	var receipt tgfake.Message
	var jobMoney string   // what the labelled run cost, by hand
	var forgedName string // the rental the forged bench went to
	t.Run("receipt card", func(t *testing.T) {
		// The server asks (BenchWanted), the agent's child benches, the
		// hub stores it and the scheduler sends the card.
		receipt = w.waitText(t, before, 30*time.Second, "RTX 4090", rental, receiptPerUnit)
		t.Logf("receipt card: %q", receipt.Text)
		// The bench's figures as the card words them, and 36 ÷ 160.
		for _, frag := range []string{"RTX 4090 on AutoDL (" + rental + ")", "tensor 160 TFLOPS", "memory 0.95 TB/s", "PCIe 4.0 x16 24.5 GB/s",
			"power 450/450 W", "disk 1.8 GB/s", "16 cores", "¥36.00/h → " + receiptPerUnit + " per tensor-TFLOP-hour", "agent"} {
			if !strings.Contains(receipt.Text, frag) {
				t.Errorf("receipt card %q lacks %q", receipt.Text, frag)
			}
		}
		if _, d := buttonPrefix(receipt, "Keep"); d == "" {
			t.Errorf("receipt card without [Keep]: %+v", receipt.Buttons)
		}
		if text, d := buttonPrefix(receipt, "Release"); d == "" || !strings.Contains(text, "¥") {
			t.Errorf("receipt card without [Release now (¥… so far)]: %+v", receipt.Buttons)
		}
		if n := w.countAll(rental, receiptPerUnit); n != 1 {
			t.Errorf("%d receipt cards for %s, want one:\n%s", n, rental, w.transcript())
		}
		r, _ := w.exportedRental(t, rental, "running", 10*time.Second)
		b, _ := r["bench"].(map[string]any)
		if b == nil || b["claimed_by"] != "agent" {
			t.Errorf("the export's %s has no bench claimed by the agent: %v", rental, r["bench"])
		}
	})

	t.Run("labelled job", func(t *testing.T) {
		// The same agent, restarted to wrap a job: it keeps its binding.
		a.kill()
		a.args = []string{"--token", tok, "--label", receiptLabel, "--", "sh", "-c", "sleep 3"}
		a.start(t)
		var job map[string]any
		deadline := time.Now().Add(30 * time.Second)
		for job == nil {
			r := rentalOf(w.exportJSON(t), rental)
			jobs, _ := r["jobs"].([]any)
			for _, j := range jobs {
				if m, _ := j.(map[string]any); m != nil && m["label"] == receiptLabel {
					job = m
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no job run %s in the export within 30 s: %v", receiptLabel, r["jobs"])
			}
			time.Sleep(300 * time.Millisecond)
		}
		d := timeField(t, job, "ended_at").Sub(timeField(t, job, "started_at"))
		// At least the sleep; the upper bound only catches a span that is
		// not the job's (a busy machine may start it late).
		if d < 3*time.Second || d > 30*time.Second {
			t.Errorf("the job of sleep 3 ran %s", d)
		}
		want := "¥" + jobCost(d)
		jobMoney = jobCost(d)
		n := len(w.fake.Messages(userID))
		w.fake.SendText(userID, userID, "/compare "+receiptLabel)
		cmp := w.waitText(t, n, 20*time.Second, receiptLabel)
		for _, frag := range []string{"AutoDL", "RTX 4090", want + " a run", "rests on 1 run"} {
			if !hasAll(cmp.Text, frag) {
				t.Errorf("/compare %s = %q; want %q (sleep 3 ran %s at ¥36/h)", receiptLabel, cmp.Text, frag, d)
			}
		}
		// The time per run, in whole seconds (either rounding of the
		// agent's fractional span).
		if secs := int(d.Seconds()); !strings.Contains(cmp.Text, fmt.Sprintf("%ds", secs)) && !strings.Contains(cmp.Text, fmt.Sprintf("%ds", secs+1)) {
			t.Errorf("/compare %s = %q; want its time, %s", receiptLabel, cmp.Text, d)
		}
	})

	t.Run("quote", func(t *testing.T) {
		n := len(w.fake.Messages(userID))
		w.fake.SendText(userID, userID, "/quote 4090 10")
		q := w.waitText(t, n, 20*time.Second, "autodl", "4090", "360")
		t.Logf("/quote 4090 10: %q", q.Text)
		// Ten hours at the rental's ¥36/h, AutoDL billing by the second
		// with no minimum: 10 × 36 = ¥360.00; and the unit of work at
		// that price, 36 ÷ 160.
		if !strings.Contains(q.Text, "AutoDL total ¥360.00") || !strings.Contains(q.Text, receiptPerUnit+" per tensor-TFLOP-hour") {
			t.Errorf("/quote 4090 10 = %q; want ¥360.00 on AutoDL (10 h × ¥36/h)", q.Text)
		}
	})

	t.Run("forged bench", func(t *testing.T) {
		// A second instance whose agent does not bench: the forged bench
		// is the rental's first.
		const uuid2 = "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d"
		const rental2 = "autodl-7a6b5c"
		n := len(w.fake.Messages(userID))
		b := agents.add(t, "forged", []string{"AutoDLContainerUUID=" + uuid2}, []string{"--token", tok, "--no-bench"})
		b.setSim4090(t, boot, "null")
		b.start(t)
		card := w.waitText(t, n, 30*time.Second, fragNewInstance+"autodl", uuid2[:6])
		w.adoptAt(t, card, receiptPrice)
		w.waitText(t, n, 20*time.Second, fragLoggedAs+rental2)
		_, tok2 := b.binding(t, 10*time.Second)
		b.kill()

		at := time.Now().UTC().Truncate(time.Second)
		before := w.exportAsOf(t, at)
		forged := strings.Replace(strings.Replace(bench4090, `"bf16_tflops": 160`, `"bf16_tflops": 1e9`, 1), `"fp16_tflops": 160`, `"fp16_tflops": 1e9`, 1)
		body, _ := json.Marshal(struct {
			Version      string          `json:"version"`
			ID           string          `json:"id"`
			AgentVersion string          `json:"agent_version"`
			BootID       string          `json:"boot_id"`
			SentAt       time.Time       `json:"sent_at"`
			Bench        json.RawMessage `json:"bench"`
		}{wire.Version, "e2e-forged-1", "forger", "boot-forged", time.Now().UTC(), json.RawMessage(forged)})
		n = len(w.fake.Messages(userID))
		code, ans, raw := w.postBench(t, tok2, body)
		names := strings.Join(ans.Bounded, " ")
		if code != http.StatusOK || !strings.Contains(names, "bf16_tflops") || !strings.Contains(names, "fp16_tflops") {
			t.Fatalf("forged bench: %d %s; want 200 naming bf16_tflops and fp16_tflops as bounded", code, raw)
		}
		card2 := w.waitText(t, n, 20*time.Second, rental2, "RTX 4090")
		t.Logf("receipt card of the forged bench: %q", card2.Text)
		// The claim is not shown: no tensor figure, so no price per
		// unit of work; the card says which figures were not believed.
		if strings.Contains(card2.Text, "1000000000") || strings.Contains(card2.Text, "1e+09") || strings.Contains(card2.Text, "tensor-TFLOP-hour") ||
			strings.Contains(strings.ToLower(card2.Text), "tensor 1") {
			t.Errorf("the receipt of a forged bench shows the claim: %q", card2.Text)
		}
		if !hasAll(card2.Text, "not believed", "bf16", "fp16") {
			t.Errorf("the receipt of a forged bench %q does not say the tensor figures were not believed", card2.Text)
		}
		forgedName = rental2
		after := w.exportAsOf(t, at)
		for _, name := range []string{rental, rental2} {
			x, y := rentalOf(before, name), rentalOf(after, name)
			cx, _ := json.Marshal(x["charges"])
			cy, _ := json.Marshal(y["charges"])
			if !bytes.Equal(cx, cy) || fmt.Sprint(x["price"]) != fmt.Sprint(y["price"]) || x["state"] != y["state"] {
				t.Errorf("%s moved with a forged bench: charges %s → %s, price %v → %v, state %v → %v", name, cx, cy, x["price"], y["price"], x["state"], y["state"])
			}
		}
	})

	t.Run("dashboard", func(t *testing.T) {
		// The same receipt and table on the dashboard, signed in with
		// Telegram's initData as the Mini App is.
		tok := w.dashSession(t)
		var month dashboard.MonthPage
		w.dashGet(t, tok, dashboard.PathMonth, &month)
		ids := map[string]int64{}
		for _, r := range month.Rentals {
			ids[r.Name] = r.ID
		}
		var rp dashboard.RentalPage
		w.dashGet(t, tok, fmt.Sprintf("%s?id=%d", dashboard.PathRental, ids[rental]), &rp)
		rc := rp.Receipt
		if rc == nil || rc.ClaimedBy != "agent" || rc.PricePerTFLOPHour == nil || *rc.PricePerTFLOPHour != "0.225000" ||
			rc.PricePerTFLOPHourText != receiptPerUnit+" per tensor-TFLOP-hour" {
			t.Fatalf("%s's receipt on the dashboard: %+v; want 36 ÷ 160 = 0.225000 claimed by the agent", rental, rc)
		}
		if f := rc.GPUs[0].Figures[0]; f.Name != "bf16_tflops" || f.Text != "160 TFLOPS" || f.Label == "" {
			t.Errorf("first figure %+v, want bf16 160 TFLOPS labelled", f)
		}
		if forgedName != "" {
			var fp dashboard.RentalPage
			w.dashGet(t, tok, fmt.Sprintf("%s?id=%d", dashboard.PathRental, ids[forgedName]), &fp)
			if fp.Receipt == nil || fp.Receipt.PricePerTFLOPHour != nil || fp.Receipt.GPUs[0].Figures[0].Measured || len(fp.Receipt.Bounded) != 2 {
				t.Errorf("the forged bench on the dashboard: %+v; want its tensor figures not measured and named bounded", fp.Receipt)
			}
		}
		if jobMoney != "" {
			var cp dashboard.ComparePage
			w.dashGet(t, tok, dashboard.PathCompare+"?label="+receiptLabel, &cp)
			if len(cp.Tables) != 1 || len(cp.Tables[0].Rows) != 1 || cp.Tables[0].Rows[0].Money == nil || *cp.Tables[0].Rows[0].Money != jobMoney {
				t.Errorf("the dashboard's %s table: %+v; want one row of ¥%s a run", receiptLabel, cp.Tables, jobMoney)
			}
		}
	})
}

// dashSession signs in to the dashboard with initData signed as
// Telegram signs it, and returns the session's bearer token.
func (w *world) dashSession(t *testing.T) string {
	t.Helper()
	res, err := http.Post("http://"+w.addr+dashboard.PathSession, "text/plain", strings.NewReader(dashtest.InitData(tgToken, userID, time.Now())))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var a dashboard.SessionAnswer
	if err := json.NewDecoder(res.Body).Decode(&a); err != nil || a.Token == "" {
		t.Fatalf("dashboard session: %d %v", res.StatusCode, err)
	}
	return a.Token
}

// dashGet GETs a dashboard answer with the bearer token into v.
func (w *world) dashGet(t *testing.T, tok, path string, v any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+w.addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		var raw bytes.Buffer
		raw.ReadFrom(res.Body)
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, raw.String())
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
