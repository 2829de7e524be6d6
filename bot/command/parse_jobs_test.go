package command

import (
	"strings"
	"testing"
)

// TestParse_Jobs: /job and /compare as people write them, English and
// Chinese, and their refusals with the key that words them.
func TestParse_Jobs(t *testing.T) {
	ok := []struct {
		in   string
		want Command
	}{
		{"/job box1", JobListCmd{Name: "box1"}},
		{"/job name=box1", JobListCmd{Name: "box1"}},
		{"/job box1 yolo-epoch", JobNameCmd{Name: "box1", Label: "yolo-epoch"}},
		{"/job box1 yolo-epoch 10:05 11:10", JobNameCmd{Name: "box1", Label: "yolo-epoch", From: at(2026, 11, 1, 10, 5, 0), To: at(2026, 11, 1, 11, 10, 0)}},
		{"/job box1 yolo yesterday 22:00 today 01:10", JobNameCmd{Name: "box1", Label: "yolo", From: at(2026, 10, 31, 22, 0, 0), To: at(2026, 11, 1, 1, 10, 0)}},
		{"/job box1 yolo 23:00 01:10", JobNameCmd{Name: "box1", Label: "yolo", From: at(2026, 10, 31, 23, 0, 0), To: at(2026, 11, 1, 1, 10, 0)}},
		{"/job box1 yolo 3h ago 1h ago", JobNameCmd{Name: "box1", Label: "yolo", From: at(2026, 11, 1, 9, 0, 0), To: at(2026, 11, 1, 11, 0, 0)}},
		{"/job box1 label=yolo from=2026-11-01 10:00 to=2026-11-01 11:00", JobNameCmd{Name: "box1", Label: "yolo", From: at(2026, 11, 1, 10, 0, 0), To: at(2026, 11, 1, 11, 0, 0)}},
		{"/任务 box1 yolo 昨天 22:00 今天 01:10", JobNameCmd{Name: "box1", Label: "yolo", From: at(2026, 10, 31, 22, 0, 0), To: at(2026, 11, 1, 1, 10, 0)}},
		{"/job yolo@2026-10-30 a.b_c", JobNameCmd{Name: "yolo@2026-10-30", Label: "a.b_c"}},
		{"/compare", CompareCmd{}},
		{"/compare yolo-epoch", CompareCmd{Label: "yolo-epoch"}},
		{"/对比 yolo-epoch", CompareCmd{Label: "yolo-epoch"}},
		{"/compare label=mnist", CompareCmd{Label: "mnist"}},
	}
	for _, tc := range ok {
		got, err := Parse(tc.in, testNow, shanghai)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if show(got) != show(tc.want) {
			t.Errorf("%q:\n got %s\nwant %s", tc.in, show(got), show(tc.want))
		}
	}
	bad := []struct{ in, key string }{
		{"/job", "missing_name"},
		{"/job box<1>", "bad_name"},
		{"/job box1 yolo/epoch", "job_bad_label"},
		{"/job box1 yolo 10:00", "job_one_time"},
		{"/job box1 yolo to=10:00", "job_one_time"},
		{"/job box1 yolo 11:00 10:00", "job_span_order"},
		{"/job box1 yolo 10:00 10:00", "job_span_order"},
		{"/job box1 yolo 2026-09-01 10:00 2026-10-30 10:00", "job_span_long"},
		{"/job box1 yolo 10:00 2026-11-02 10:00", "future_time"},
		{"/job box1 yolo 10:00 soon", "bad_time"},
		{"/job box1 yolo 1999-01-01 10:00 1999-01-01 11:00", "old_time"},
		{"/job box1 yolo 10:00 11:00 11:30", "unexpected"},
		{"/job box1 yolo 10:00 11:00 from=10:00", "twice"},
		{"/job box1 yolo extra=1", "unknown_key"},
		{"/compare a b", "unexpected"},
		{"/compare " + strings.Repeat("y", 65), "job_bad_label"},
		{"/compare yolo label=mnist", "twice"},
	}
	for _, tc := range bad {
		_, err := Parse(tc.in, testNow, shanghai)
		pe, ok := err.(*ParseError)
		if !ok || pe.Key != tc.key {
			t.Errorf("%q: err %v, want %s", tc.in, err, tc.key)
		}
	}
}
