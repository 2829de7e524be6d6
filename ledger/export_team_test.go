package ledger

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// teamExportBook is a small team's book: @alice (owner) runs box1 for
// project yolo-v9 with a volume attached, @bob runs box2 for llm and
// paid a loose one-off, carol (removed since) owns an old charge, and
// pod7 was synced from RunPod and nobody claimed it yet. Members lists
// the team as the store would.
func teamExportBook(t *testing.T) (*Book, ExportTeam, time.Time) {
	t.Helper()
	b, asOf := designBook(t)
	b.User.ID = TeamLedger(3)
	box1, data := b.Rentals[0], b.Volumes[0]
	box1.Owner, box1.Project = 101, "yolo-v9"
	data.Owner, data.Project = 101, "yolo-v9"
	box2 := &Rental{ID: 2, Name: "box2", Platform: "autodl", GPU: "A100", GPUCount: 2, Mode: PerHour,
		Priced: true, Price: Price{MustDecimal("7.5"), UnitHour}, Currency: CNY, Owner: 102, Project: "llm",
		Events: []Event{{Kind: EventStart, At: asOf.Add(-5 * time.Hour).UTC()}, {Kind: EventStop, At: asOf.Add(-150 * time.Minute).UTC()}}}
	pod := &Rental{ID: 3, Name: "pod7", Platform: "runpod", PlatformID: "abc123xyz", GPU: "H100", GPUCount: 1, Mode: PerSecond,
		Priced: true, Price: Price{MustDecimal("2.49"), UnitHour}, Currency: USD,
		Events: []Event{{Kind: EventStart, At: asOf.Add(-3 * time.Hour).UTC()}}}
	b.Rentals = append(b.Rentals, box2, pod)
	b.Charges = []Charge{
		{ID: 1, Platform: "autodl", Amount: MustDecimal("12.5"), Currency: CNY, At: asOf.Add(-2 * time.Hour).UTC(), Note: "dataset", Owner: 102, Project: "llm"},
		{ID: 2, Platform: "autodl", Amount: MustDecimal("3"), Currency: CNY, At: asOf.Add(-20 * 24 * time.Hour).UTC(), Note: "image", Owner: 104},
	}
	team := ExportTeam{Team: Team{ID: 3, Name: "vision"}, Members: []Member{
		{TeamID: 3, UserID: 101, Username: "alice", Role: RoleOwner},
		{TeamID: 3, UserID: 105, Username: "=cmd|x", Role: RoleAdmin}, // a username Telegram would not allow
		{TeamID: 3, UserID: 102, Username: "bob", Role: RoleMember},
	}}
	return b, team, asOf
}

// TestWriteExportJSON_Team: a team ledger's export has its team (the
// members now, then a removed one who still owns a record) and every
// rental, volume and one-off its owner and project, absent for the
// unclaimed synced rental; the bytes are the golden file's.
func TestWriteExportJSON_Team(t *testing.T) {
	b, team, asOf := teamExportBook(t)
	var buf bytes.Buffer
	if err := WriteExportJSON(&buf, b, asOf, WithTeam(team)); err != nil {
		t.Fatal(err)
	}
	golden(t, "export_team.json", buf.Bytes())

	var doc struct {
		Team struct {
			ID      int64  `json:"id"`
			Name    string `json:"name"`
			Members []struct {
				ID       int64  `json:"id"`
				Username string `json:"username"`
				Role     string `json:"role"`
				Removed  bool   `json:"removed"`
			} `json:"members"`
		} `json:"team"`
		Rentals []map[string]any `json:"rentals"`
		Volumes []map[string]any `json:"volumes"`
		OneOffs []map[string]any `json:"one_offs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Team.ID != 3 || doc.Team.Name != "vision" {
		t.Errorf("team %d %q, want 3 vision", doc.Team.ID, doc.Team.Name)
	}
	var members []string
	for _, m := range doc.Team.Members {
		members = append(members, strings.Join([]string{itoa(m.ID), m.Username, m.Role, map[bool]string{true: "removed", false: "in"}[m.Removed]}, " "))
	}
	want := []string{"101 alice owner in", "105 =cmd|x admin in", "102 bob member in", "104  member removed"}
	if !slices.Equal(members, want) {
		t.Errorf("members %q, want %q", members, want)
	}
	who := func(m map[string]any) string {
		o, hasO := m["owner"]
		p, hasP := m["project"]
		s := m["name"].(string) + ":"
		if hasO {
			s += itoa(int64(o.(float64)))
		}
		if hasP {
			s += "/" + p.(string)
		}
		return s
	}
	var got []string
	for _, r := range doc.Rentals {
		got = append(got, who(r))
	}
	for _, v := range doc.Volumes {
		got = append(got, who(v))
	}
	for _, o := range doc.OneOffs {
		o["name"] = o["note"]
		got = append(got, who(o))
	}
	wantWho := []string{"box2:102/llm", "pod7:", "box1:101/yolo-v9", "data1:101/yolo-v9", "image:104", "dataset:102/llm"}
	if !slices.Equal(got, wantWho) {
		t.Errorf("owners and projects %q, want %q", got, wantWho)
	}
}

// TestWriteExportJSON_TeamTotalsAreTheSplit: the totals a team's export
// prints are, per currency, the sum of ledger.Split's rows; and the
// export's own lines, summed by their owner (a rental's compute and
// traffic, each volume's charge, each one-off), give Split's rows by
// person: a reader of the export gets the chat's split.
func TestWriteExportJSON_TeamTotalsAreTheSplit(t *testing.T) {
	b, team, asOf := teamExportBook(t)
	var buf bytes.Buffer
	if err := WriteExportJSON(&buf, b, asOf, WithTeam(team)); err != nil {
		t.Fatal(err)
	}
	type line struct {
		Owner    int64    `json:"owner"`
		Currency Currency `json:"currency"`
		Charge   string   `json:"charge"`
		Charges  struct {
			Compute, Traffic string
		} `json:"charges"`
	}
	var doc struct {
		Rentals []line                              `json:"rentals"`
		Volumes []line                              `json:"volumes"`
		OneOffs []line                              `json:"one_offs"`
		Totals  map[Currency]struct{ Total string } `json:"totals"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	money := func(s string, c Currency) Money {
		d, err := ParseDecimal(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return MoneyFromDecimal(d, c)
	}
	byOwner := map[string]Money{}
	add := func(owner int64, c Currency, s string) {
		k := itoa(owner) + " " + string(c)
		byOwner[k] = byOwner[k].Add(money(s, c))
	}
	for _, r := range doc.Rentals {
		add(r.Owner, r.Currency, r.Charges.Compute)
		add(r.Owner, r.Currency, r.Charges.Traffic)
	}
	for _, v := range doc.Volumes {
		add(v.Owner, v.Currency, v.Charge)
	}
	for _, o := range doc.OneOffs {
		add(o.Owner, o.Currency, o.Charge)
	}
	rows := Split(StatementAsOf(b, asOf))
	sums := map[Currency]Money{}
	for _, r := range rows {
		sums[r.Currency] = sums[r.Currency].Add(r.Amount)
	}
	if len(doc.Totals) != len(sums) {
		t.Errorf("%d totals in the export, the split has %d currencies", len(doc.Totals), len(sums))
	}
	for c, tot := range doc.Totals {
		if s := sums[c]; s.String() != tot.Total {
			t.Errorf("the export's %s total is %s, the split's rows add up to %s", c, tot.Total, s)
		}
	}
	persons := SplitBy(rows, false)
	if len(persons) != len(byOwner) {
		t.Errorf("%d owners × currencies in the export's lines, %d in the split: %v vs %v", len(byOwner), len(persons), byOwner, persons)
	}
	for _, p := range persons {
		if got := byOwner[itoa(p.Owner)+" "+string(p.Currency)]; got.String() != p.Amount.String() {
			t.Errorf("owner %d in %s: the export's lines add up to %s, the split says %s", p.Owner, p.Currency, got, p.Amount)
		}
	}
}

// TestWriteExportCSV_Team: a team's CSV has the two columns owner and
// project at the end, filled on its rentals, volumes and one-offs (a
// username Telegram does not allow is written as the ID, never as a
// formula), and it is the golden file; a personal ledger's CSV has the
// columns it had, with or without WithTeam.
func TestWriteExportCSV_Team(t *testing.T) {
	b, team, asOf := teamExportBook(t)
	b.Charges[0].Owner = 105
	var buf bytes.Buffer
	if err := WriteExportCSV(&buf, b, asOf, WithTeam(team)); err != nil {
		t.Fatal(err)
	}
	golden(t, "export_team.csv", buf.Bytes())
	rows, err := csv.NewReader(bytes.NewReader(buf.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rows[0], ExportCSVTeamColumns) || !slices.Equal(rows[0][:len(ExportCSVColumns)], ExportCSVColumns) ||
		!slices.Equal(rows[0][len(ExportCSVColumns):], []string{"owner", "project"}) {
		t.Fatalf("header %q", rows[0])
	}
	n := len(rows[0])
	var got []string
	for _, r := range rows[1:] {
		if len(r) != n {
			t.Fatalf("row of %d cells under %d columns: %q", len(r), n, r)
		}
		if r[n-2] != "" || r[n-1] != "" {
			got = append(got, r[0]+" "+r[1]+r[44]+" "+r[n-2]+" "+r[n-1])
		}
	}
	want := []string{"rental box2 @bob llm", "rental box1 @alice yolo-v9", "volume data1 @alice yolo-v9", "one_off image 104 ", "one_off dataset 105 llm"}
	if !slices.Equal(got, want) {
		t.Errorf("owned rows %q, want %q", got, want)
	}

	personal, _ := designBook(t)
	var plain, with bytes.Buffer
	if err := WriteExportCSV(&plain, personal, asOf); err != nil {
		t.Fatal(err)
	}
	if err := WriteExportCSV(&with, personal, asOf, WithTeam(team)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(plain.Bytes(), with.Bytes()) {
		t.Error("WithTeam changed a personal ledger's CSV")
	}
	golden(t, "export_design.csv", plain.Bytes())
	var pj, wj bytes.Buffer
	if err := WriteExportJSON(&pj, personal, asOf); err != nil {
		t.Fatal(err)
	}
	if err := WriteExportJSON(&wj, personal, asOf, WithTeam(team)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pj.Bytes(), wj.Bytes()) || bytes.Contains(pj.Bytes(), []byte(`"team"`)) {
		t.Error("WithTeam changed a personal ledger's JSON, or it names a team")
	}
}

// TestWriteExportJSON_TeamWithoutNames: a team ledger exported without
// WithTeam (the caller has no team store) still says it is a team's, by
// id, and lists no members it cannot name.
func TestWriteExportJSON_TeamWithoutNames(t *testing.T) {
	b, _, asOf := teamExportBook(t)
	var buf bytes.Buffer
	if err := WriteExportJSON(&buf, b, asOf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("\"team\": {\n    \"id\": 3,\n    \"name\": \"\",\n    \"members\": []\n  }\n}")) {
		t.Errorf("no bare team object at the end:\n%s", buf.Bytes())
	}
}
