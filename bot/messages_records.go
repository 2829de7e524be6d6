package bot

import "github.com/gpuledger/gpuledger/chat"

// recordTexts are the replies of /records, /delete and /fix
// (core_records.go).
var recordTexts = chat.Catalog{
	"records_head": {
		"Your records, newest first (<code>/fix #N …</code> corrects one, <code>/delete #N</code> deletes it; /undo reverses either):",
		"你的记录，最新的在前（<code>/fix #编号 …</code> 更正，<code>/delete #编号</code> 删除；/undo 可撤销）："},
	"records_none": {
		"No records yet: the charges, top-ups, balances and traffic you record are listed here with their numbers.",
		"还没有记录：你记下的费用、充值、余额和流量会带编号列在这里。"},
	"records_none_for": {
		"No records for %[1]s: /records lists all of yours.",
		"%[1]s 没有记录：/records 列出你的全部记录。"},
	"records_more": {
		"(the newest %[1]s; /records NAME or /records PLATFORM shows one rental's or platform's)",
		"（最新的 %[1]s 条；/records 名字 或 /records 平台 只看一台机器或一个平台的）"},
	"record_deleted": {
		"✓ Deleted %[1]s\n/undo puts it back.",
		"✓ 已删除 %[1]s\n/undo 可恢复。"},
	"record_fixed": {
		"✓ Corrected %[1]s\nwas: %[2]s\n/undo puts it back as it was.",
		"✓ 已更正 %[1]s\n原为：%[2]s\n/undo 可恢复原样。"},
	"record_ref": {
		"#%[1]s · <code>/fix #%[1]s …</code> corrects it, <code>/delete #%[1]s</code> deletes it",
		"#%[1]s · <code>/fix #%[1]s …</code> 可更正，<code>/delete #%[1]s</code> 可删除"},
	"rec_charge":        {"charge", "费用"},
	"rec_topup":         {"top-up", "充值"},
	"rec_balance":       {"balance", "余额"},
	"rec_traffic_usage": {"traffic", "流量"},
}

// rt renders one of recordTexts in the user's language.
func (r *req) rt(key string, args ...any) string { return recordTexts.Render(r.lang, key, args...) }
