package bot

import "github.com/gpuledger/gpuledger/chat"

// connectTexts are the replies of /connect, /disconnect, /reconcile and
// /release's offer to terminate on the platform. No template shows a key:
// at most its hint (the last four characters, "…abcd").
var connectTexts = chat.Catalog{
	"conn_off": {
		"Platform connections are off on this server. Whoever runs it turns them on by giving it a secret to encrypt the keys with (<code>GPULEDGER_SECRET</code>, or the key file <code>gpuledger.key</code> it creates beside the database) and restarting it: see docs/config.md.",
		"这台服务器没有开启平台连接。运行它的人需要给它一个加密 key 用的密钥（<code>GPULEDGER_SECRET</code>，或它在数据库旁创建的密钥文件 <code>gpuledger.key</code>），然后重启：见 docs/config.md。"},
	"conn_deleted": {
		"I deleted your message that held the key.",
		"我已删除你那条带 key 的消息。"},
	"conn_delete_failed": {
		"⚠ I could not delete your message that holds the key: delete it yourself now.",
		"⚠ 我没能删除你那条带 key 的消息：请立即自己删除。"},
	"conn_nothing_kept": {
		"The console keeps no copy of what you type: nothing of your message was kept.",
		"终端不保存你输入的内容：你的消息没有留下任何副本。"},
	"conn_group": {
		"%[1]sthis group saw your message with an API key. %[2]s Nothing was stored. Revoke that key on %[3]s now, create a new one, and send it to me in a private chat: <code>/connect %[4]s KEY</code>",
		"%[1]s这个群看到了你那条带 API key 的消息。%[2]s 没有保存任何内容。请立即在 %[3]s 上作废这个 key，新建一个，然后在私聊中发给我：<code>/connect %[4]s KEY</code>"},
	"conn_group_deleted": {
		"I deleted it, but others may have read it.",
		"我已删除，但其他人可能已经看到。"},
	"conn_group_delete_failed": {
		"I could not delete it (a bot deletes others' messages only as an admin): delete it yourself.",
		"我没能删除它（机器人只有作为管理员才能删除别人的消息）：请自己删除。"},
	"conn_alone": {
		"✗ Send <code>/connect PLATFORM KEY</code> alone, in a message of its own: nothing of this message was run or stored.",
		"✗ 请单独发送 <code>/connect 平台 KEY</code>，不要和其他命令写在一条消息里：这条消息里的内容都没有执行或保存。"},
	"conn_forwarded": {
		"✗ A forwarded <code>/connect</code> is not run: send <code>/connect PLATFORM KEY</code> yourself, in this private chat.",
		"✗ 转发的 <code>/connect</code> 不会执行：请在私聊中自己发送 <code>/connect 平台 KEY</code>。"},
	"conn_ok": {
		"✓ Connected %[1]s (key %[2]s). The key works; it is stored encrypted and is never shown again. Its instances, prices and balance are read within a minute; <code>/connect</code> lists your connections.",
		"✓ 已连接 %[1]s（key %[2]s）。key 可用，已加密保存，不会再显示。一分钟内会读取它的实例、价格和余额；<code>/connect</code> 列出已连接的平台。"},
	"conn_hint":    {"…%[1]s", "…%[1]s"},
	"conn_no_hint": {"hidden", "已隐藏"},
	"conn_rejected": {
		"✗ %[1]s rejected this key, so nothing was stored. %[2]s",
		"✗ %[1]s 拒绝了这个 key，没有保存。%[2]s"},
	"conn_rate_limited": {
		"✗ %[1]s is limiting requests, so the key could not be checked and nothing was stored. Try again in %[2]s.",
		"✗ %[1]s 正在限制请求频率，无法检查 key，没有保存。请 %[2]s 后再试。"},
	"conn_unavailable": {
		"✗ %[1]s did not answer (down, slow or failing), so the key could not be checked and nothing was stored. Try again later.",
		"✗ %[1]s 没有响应（宕机、太慢或出错），无法检查 key，没有保存。请稍后再试。"},
	"conn_bad_answer": {
		"✗ %[1]s answered something that could not be read, so the key could not be checked and nothing was stored. Try again later.",
		"✗ %[1]s 返回的内容无法读取，无法检查 key，没有保存。请稍后再试。"},
	"conn_invalid": {
		"✗ Nothing was stored: the platform or the key was not accepted. Platforms that can be connected: %[1]s; a key is one word, copied whole from the platform.",
		"✗ 没有保存：平台或 key 不被接受。可以连接的平台：%[1]s；key 是一个词，请从平台完整复制。"},
	"conn_list_head": {"<b>Platform connections</b>", "<b>平台连接</b>"},
	"conn_list_none": {"No platform is connected yet.", "还没有连接任何平台。"},
	"conn_list_line": {
		"✓ <b>%[1]s</b> · key %[2]s · added %[3]s · %[4]s",
		"✓ <b>%[1]s</b> · key %[2]s · 添加于 %[3]s · %[4]s"},
	"conn_list_rejected": {
		"⚠ <b>%[1]s</b> · key %[2]s · added %[3]s · rejected by the platform since %[4]s: it is not used until you send a new one: <code>/connect %[5]s KEY</code>",
		"⚠ <b>%[1]s</b> · key %[2]s · 添加于 %[3]s · 自 %[4]s 起被平台拒绝：发送新 key 之前不再使用：<code>/connect %[5]s KEY</code>"},
	"conn_synced":       {"last sync %[1]s", "上次同步 %[1]s"},
	"conn_never_synced": {"not synced yet", "尚未同步"},
	"conn_last_error":   {"   last sync failed: %[1]s", "   上次同步失败：%[1]s"},
	"conn_list_missing": {"Not connected:", "未连接："},
	"conn_list_where": {
		"• %[1]s: %[2]s Then, in this private chat: <code>/connect %[3]s KEY</code>",
		"• %[1]s：%[2]s 然后在私聊中发送：<code>/connect %[3]s KEY</code>"},
	"where_runpod": {
		"create a key in RunPod's console, Settings → API Keys (%[1]s), with Read/Write permission (Read only syncs, but cannot stop a pod).",
		"在 RunPod 控制台 Settings → API Keys（%[1]s）创建 key，权限选 Read/Write（Read only 只能同步，不能关机）。"},
	"where_vast": {
		"create an API key on Vast.ai's Keys page (%[1]s).",
		"在 Vast.ai 的 Keys 页面（%[1]s）创建 API key。"},
	"where_lambda": {
		"create a Cloud API key on Lambda's API keys page (%[1]s); it has no scopes.",
		"在 Lambda 的 API keys 页面（%[1]s）创建 Cloud API key；它没有权限范围之分。"},
	"where_autodl": {
		"create a developer token in AutoDL's console, Settings → 开发者Token (it reads the wallet balance, and Pro instances of verified accounts).",
		"在 AutoDL 控制台的 设置 → 开发者Token 创建令牌（可读取钱包余额，以及实名认证账号的 Pro 实例）。"},
	"disconnected": {
		"✓ Disconnected %[1]s: its key is deleted. Rentals keep their platform IDs; nothing was stopped or released. To connect again: <code>/connect %[2]s KEY</code>",
		"✓ 已断开 %[1]s：它的 key 已删除。机器保留平台 ID，没有关机或释放。重新连接：<code>/connect %[2]s KEY</code>"},
	"not_connected": {
		"✗ %[1]s is not connected, so nothing was changed. <code>/connect</code> lists your connections.",
		"✗ %[1]s 没有连接，没有做任何修改。<code>/connect</code> 列出已连接的平台。"},
	"release_live": {
		"<b>%[1]s</b> still runs on %[2]s (%[3]s %[4]s). Terminate it there, or only record the release here: the platform bills it until it is terminated there.",
		"<b>%[1]s</b> 仍在 %[2]s 上运行（%[3]s %[4]s）。在平台上销毁它，或只在这里记录释放：在平台上销毁之前，平台会继续计费。"},
	"release_live_noid": {
		"<b>%[1]s</b> still runs on %[2]s. Terminate it there, or only record the release here: the platform bills it until it is terminated there.",
		"<b>%[1]s</b> 仍在 %[2]s 上运行。在平台上销毁它，或只在这里记录释放：在平台上销毁之前，平台会继续计费。"},
	"word_pod":      {"pod", "pod"},
	"word_instance": {"instance", "实例"},
	"btn_pterm":     {"Terminate on %[1]s", "在 %[1]s 上销毁"},
	"btn_plog":      {"Only record it", "只记录"},
	"plog_released": {"Already released: nothing changed.", "已经释放，没有修改。"},
}

// ct renders one of connectTexts in the user's language.
func (r *req) ct(key string, args ...any) string { return connectTexts.Render(r.lang, key, args...) }
