"""UI strings in English and Chinese. Answers and reports are translated by the agent, not here."""

from __future__ import annotations

LANGS = ("en", "zh")

STRINGS: dict[str, dict[str, str]] = {
    # navigation and layout
    "app_tagline": {"en": "Ask your spreadsheet a question. Every number comes with its evidence.",
                    "zh": "向你的表格提问。每个数字都有证据支撑。"},
    "nav_home": {"en": "Workspaces", "zh": "工作区"},
    "language": {"en": "Language", "zh": "语言"},
    # accounts (multi-user mode)
    "auth_login": {"en": "Sign in", "zh": "登录"},
    "auth_signup": {"en": "Create an account", "zh": "注册账号"},
    "auth_logout": {"en": "Sign out", "zh": "退出登录"},
    "auth_why": {"en": "This Verity is shared: your workspaces and files are visible only to you.",
                 "zh": "这个 Verity 是多人共用的：你的工作区和文件只有你自己能看到。"},
    "auth_name": {"en": "Your name", "zh": "你的名字"},
    "auth_email": {"en": "E-mail address", "zh": "电子邮箱"},
    "auth_password": {"en": "Password", "zh": "密码"},
    "auth_have_account": {"en": "Already have an account? Sign in", "zh": "已有账号？去登录"},
    "auth_no_account": {"en": "No account yet? Create one", "zh": "还没有账号？注册一个"},
    "auth_failed": {"en": "The e-mail address or the password is wrong.", "zh": "邮箱或密码不正确。"},
    "auth_throttled": {"en": "Too many failed sign-ins. Wait a few minutes, then try again.",
                       "zh": "登录失败次数过多，请等几分钟再试。"},
    "auth_bad_email": {"en": "Enter an e-mail address such as name@example.com.",
                       "zh": "请输入有效的邮箱地址，例如 name@example.com。"},
    "auth_short_password": {"en": "Use a password of at least 8 characters.", "zh": "密码至少需要 8 个字符。"},
    "auth_email_taken": {"en": "An account with this e-mail address already exists.",
                         "zh": "这个邮箱已经注册过了。"},
    "auth_signup_closed": {"en": "New accounts are created by the administrator (`verity users add`).",
                           "zh": "新账号由管理员创建（`verity users add`）。"},
    "auth_account": {"en": "Your account", "zh": "你的账号"},
    "auth_change_password": {"en": "Change password", "zh": "修改密码"},
    "auth_current_password": {"en": "Current password", "zh": "当前密码"},
    "auth_new_password": {"en": "New password (at least 8 characters)", "zh": "新密码（至少 8 个字符）"},
    "auth_password_changed": {"en": "Password changed. Other browsers were signed out.",
                              "zh": "密码已修改，其他浏览器已退出登录。"},
    "auth_delete_account": {"en": "Delete my account", "zh": "注销账号"},
    "auth_delete_account_help": {"en": "This deletes your account and, for good, every workspace you own: uploaded "
                                       "files, analyses, reports and notes.",
                                 "zh": "这会注销你的账号，并永久删除你拥有的所有工作区：上传的文件、分析、报告和参考资料。"},
    "auth_delete_account_password": {"en": "Your password, to confirm", "zh": "输入密码以确认"},
    "auth_tokens": {"en": "API tokens", "zh": "API 令牌"},
    "auth_tokens_help": {"en": "Scripts use a token instead of your password: send the header "
                               "'Authorization: Bearer <token>'. Revoke a token you no longer use.",
                         "zh": "脚本用令牌代替密码访问：在请求头中发送 'Authorization: Bearer <令牌>'。不再使用的令牌请撤销。"},
    "auth_token_once": {"en": "Copy this token now: it is shown only once.", "zh": "请立即复制这个令牌：它只显示这一次。"},
    "auth_no_tokens": {"en": "No API token yet.", "zh": "还没有 API 令牌。"},
    "auth_token_name": {"en": "What is it for?", "zh": "用途"},
    "auth_token_placeholder": {"en": "e.g. monthly report script", "zh": "例如：月报脚本"},
    "auth_create_token": {"en": "Create a token", "zh": "创建令牌"},
    "auth_revoke": {"en": "Revoke", "zh": "撤销"},
    "auth_last_used": {"en": "last used", "zh": "最近使用"},
    # index
    "workspaces": {"en": "Your workspaces", "zh": "你的工作区"},
    "no_workspaces": {"en": "No workspace yet. Create one to start.", "zh": "还没有工作区，先创建一个吧。"},
    "create_workspace": {"en": "Create a workspace", "zh": "创建工作区"},
    "workspace_name": {"en": "Name", "zh": "名称"},
    "workspace_placeholder": {"en": "e.g. Q3 sales review", "zh": "例如：第三季度销售复盘"},
    "create": {"en": "Create", "zh": "创建"},
    "created": {"en": "Created", "zh": "创建于"},
    "open": {"en": "Open", "zh": "打开"},
    # datasets
    "data": {"en": "Data", "zh": "数据"},
    "no_datasets": {"en": "No file yet. Upload a spreadsheet (.xlsx, .xls, .ods, .csv, .tsv).",
                    "zh": "还没有文件。请上传表格（.xlsx、.xls、.ods、.csv、.tsv）。"},
    "upload": {"en": "Upload", "zh": "上传"},
    "upload_file": {"en": "Add a file", "zh": "添加文件"},
    "sheet_optional": {"en": "Sheet (optional)", "zh": "工作表（可选）"},
    # file errors by category (CONTRACT.md's categories), shown before the reader's own message,
    # which names sizes, limits and sheets (in English)
    "file_error_unsupported_format": {
        "en": "Verity cannot read this kind of file. Upload data as .xlsx, .xls, .ods, .csv or .tsv, "
              "and reference notes as .txt, .md, .docx or .pdf.",
        "zh": "无法读取这种文件格式。数据请上传 .xlsx、.xls、.ods、.csv 或 .tsv，参考资料请上传 .txt、.md、.docx 或 .pdf。"},
    "file_error_corrupt_file": {
        "en": "The file is damaged or incomplete. Open it in Excel, WPS or Word, save a new copy and upload that.",
        "zh": "文件已损坏或不完整。请用 Excel、WPS 或 Word 打开后重新另存一份再上传。"},
    "file_error_encrypted_file": {
        "en": "The file is protected with a password. Remove the password in Excel (File → Info → Protect "
              "Workbook), save, and upload again.",
        "zh": "文件设置了打开密码。请在 Excel 中取消密码（文件 → 信息 → 保护工作簿）后另存，再上传。"},
    "file_error_empty_file": {
        "en": "The file is empty: there is nothing to read.",
        "zh": "文件是空的，没有可读取的内容。"},
    "file_error_too_large": {
        "en": "The file is larger than Verity reads. Delete sheets, rows or columns you do not need, or split "
              "it into several files.",
        "zh": "文件太大，超出了可读取的限制。请删除不需要的工作表、行或列，或拆成几个文件。"},
    "file_error_no_table_found": {
        "en": "No table was found in the file. Check that a sheet has a header row with data rows below it.",
        "zh": "文件中没有找到数据表格。请确认工作表里有一行表头和下面的数据行。"},
    "file_error_encoding_error": {
        "en": "The text encoding of the file was not recognised. In Excel, save it as “CSV UTF-8 (Comma "
              "delimited)” and upload again.",
        "zh": "无法识别文件的文字编码。请在 Excel 中另存为“CSV UTF-8（逗号分隔）”再上传。"},
    # the headline of a file error: the file and what is wrong with it
    "file_error_head_unsupported_format": {"en": "{file} is not a kind of file Verity reads",
                                           "zh": "Verity 不能读取 {file} 这种格式的文件"},
    "file_error_head_corrupt_file": {"en": "{file} is damaged or incomplete", "zh": "{file} 已损坏或不完整"},
    "file_error_head_encrypted_file": {"en": "{file} is protected with a password", "zh": "{file} 设置了打开密码"},
    "file_error_head_empty_file": {"en": "{file} is empty", "zh": "{file} 是空的"},
    "file_error_head_too_large": {"en": "{file} is more than Verity reads at once", "zh": "{file} 超出了一次能读取的限制"},
    "file_error_head_no_table_found": {"en": "No table was found in {file}", "zh": "在 {file} 中没有找到数据表格"},
    "file_error_head_encoding_error": {"en": "The text encoding of {file} was not recognised",
                                       "zh": "无法识别 {file} 的文字编码"},
    "this_file": {"en": "This file", "zh": "这个文件"},
    "upload_failed": {"en": "This file could not be read.", "zh": "无法读取这个文件。"},
    "rows": {"en": "rows", "zh": "行"},
    "columns": {"en": "columns", "zh": "列"},
    "sheet": {"en": "Sheet", "zh": "工作表"},
    "other_sheets": {"en": "Other sheets in this file", "zh": "文件中的其他工作表"},
    "use_sheet": {"en": "Use this sheet", "zh": "使用此工作表"},
    "versions": {"en": "Versions", "zh": "版本"},
    "version_n": {"en": "v{n}", "zh": "第 {n} 版"},
    "current_version": {"en": "current", "zh": "当前"},
    "restore": {"en": "Go back to this version", "zh": "恢复到此版本"},
    "header_row": {"en": "Column names found in row {row}", "zh": "列名位于第 {row} 行"},
    "missing": {"en": "missing", "zh": "缺失"},
    "masked": {"en": "Personal data masked", "zh": "已隐去个人信息"},
    "cleaning": {"en": "What was cleaned", "zh": "做了哪些清理"},
    "warnings": {"en": "Warnings", "zh": "注意"},
    "first_rows": {"en": "First rows", "zh": "前几行"},
    "about_rows": {"en": "about {n} rows", "zh": "约 {n} 行"},
    "dataset_loading": {"en": "These are the first rows. Still reading the rest of the file… This updates "
                              "by itself; questions asked before it is done will not use this file.",
                        "zh": "这是前几行。仍在读取文件的其余部分…… 读取完成后会自动更新；在此之前提出的问题不会使用这个文件。"},
    "dataset_failed": {"en": "Reading the whole file failed.", "zh": "读取整个文件失败。"},
    "dataset_dismiss": {"en": "Remove from the list", "zh": "从列表中移除"},
    "delete_ws": {"en": "Delete this workspace…", "zh": "删除此工作区…"},
    "delete_ws_title": {"en": "Delete a workspace", "zh": "删除工作区"},
    "delete_ws_question": {"en": "Delete the workspace “{name}”?", "zh": "要删除工作区“{name}”吗？"},
    "delete_ws_detail": {"en": "This deletes, for good, its {files} uploaded file(s) with every version, its {runs} "
                               "analyses with their reports, charts and traces, its rules and its reference notes. "
                               "Reports you downloaded stay yours.",
                         "zh": "这会永久删除其中的 {files} 个上传文件（含所有版本）、{runs} 次分析及其报告、图表和追踪记录、"
                               "工作区规则和参考资料。已下载的报告不受影响。"},
    "delete_ws_confirm": {"en": "Yes, delete it all", "zh": "确认全部删除"},
    "delete_ws_busy": {"en": "An analysis or a file read is running in this workspace; delete it when it has "
                             "finished (or stop the analysis).",
                       "zh": "此工作区有分析或文件读取正在进行；请等它完成（或停止分析）后再删除。"},
    "remove_dataset": {"en": "Remove this file…", "zh": "删除此文件…"},
    "remove_title": {"en": "Remove a file", "zh": "删除文件"},
    "remove_question": {"en": "Remove {file} from this workspace?", "zh": "要从此工作区删除 {file} 吗？"},
    "remove_detail": {"en": "This deletes the uploaded file and everything made from it: {names}. Reports already "
                             "written keep their copy of the results. This cannot be undone.",
                      "zh": "这会删除上传的文件及由它生成的所有表：{names}。已生成的报告保留各自的结果。此操作无法撤销。"},
    "remove_confirm": {"en": "Yes, remove it", "zh": "确认删除"},
    "cancel": {"en": "Cancel", "zh": "取消"},
    "remove_busy": {"en": "An analysis is running in this workspace; remove the file when it has finished.",
                    "zh": "此工作区有分析正在进行，请在完成后再删除文件。"},
    "datasets_loading": {"en": "Still reading: {files}. Questions asked now use only the files that are ready.",
                         "zh": "仍在读取：{files}。现在提问只会使用已读取完成的文件。"},
    "type_number": {"en": "number", "zh": "数值"},
    "type_integer": {"en": "integer", "zh": "整数"},
    "type_datetime": {"en": "date/time", "zh": "日期时间"},
    "type_category": {"en": "category", "zh": "类别"},
    "type_text": {"en": "text", "zh": "文本"},
    "type_boolean": {"en": "yes/no", "zh": "是/否"},
    "type_identifier": {"en": "identifier", "zh": "编号"},
    # asking
    "ask": {"en": "Ask a question", "zh": "提一个问题"},
    "ask_placeholder": {"en": "e.g. Does revenue differ by region?", "zh": "例如：不同地区的收入有差异吗？"},
    "ask_button": {"en": "Ask", "zh": "提问"},
    "suggested": {"en": "Suggested questions", "zh": "推荐问题"},
    "upload_first": {"en": "Upload a file first, then ask.", "zh": "请先上传文件，再提问。"},
    "earlier_runs": {"en": "Earlier questions", "zh": "之前的问题"},
    # run panel
    "status_queued": {"en": "Waiting to start…", "zh": "等待开始…"},
    "status_running": {"en": "Working…", "zh": "分析中…"},
    "status_waiting": {"en": "Waiting for your answer", "zh": "等待你的回答"},
    "status_done": {"en": "Done", "zh": "完成"},
    "status_failed": {"en": "Failed", "zh": "失败"},
    "status_interrupted": {"en": "Stopped", "zh": "已停止"},
    "elapsed": {"en": "elapsed", "zh": "已用时"},
    "stop": {"en": "Stop", "zh": "停止"},
    "compact_button": {"en": "Compact conversation", "zh": "压缩对话"},
    "compact_help": {"en": "Summarise the earlier conversation to keep the context small; the full text stays on disk.",
                     "zh": "总结较早的对话以节省上下文；完整内容保存在磁盘上。"},
    "plan": {"en": "Plan", "zh": "计划"},
    "plan_goal": {"en": "Goal", "zh": "目标"},
    "plan_methods": {"en": "Planned methods", "zh": "计划的方法"},
    "check_passed": {"en": "checked", "zh": "已核对"},
    "check_failed": {"en": "does not match its analysis", "zh": "与分析结果不符"},
    "checks_passed": {"en": "Every claim was checked against the analyses it cites.",
                      "zh": "每条结论都已与其引用的分析核对。"},
    "checks_failed": {"en": "Some claims do not match the analyses they cite (marked below).",
                      "zh": "部分结论与其引用的分析不符（见下方标记）。"},
    "steps": {"en": "Steps", "zh": "步骤"},
    "running_tool": {"en": "Running {tool}…", "zh": "正在运行 {tool}…"},
    "no_steps": {"en": "No step yet.", "zh": "还没有步骤。"},
    "answer": {"en": "Answer", "zh": "结论"},
    "evidence": {"en": "Evidence", "zh": "证据"},
    "method": {"en": "Method", "zh": "方法"},
    "sample_size": {"en": "Sample size", "zh": "样本量"},
    "limitations": {"en": "Limitations", "zh": "局限"},
    "numbers": {"en": "Numbers", "zh": "数字"},
    "confidence_high": {"en": "high confidence", "zh": "高可信度"},
    "confidence_medium": {"en": "medium confidence", "zh": "中等可信度"},
    "confidence_low": {"en": "low confidence", "zh": "低可信度"},
    "unverified": {"en": "This number is not backed by recorded evidence.",
                   "zh": "这个数字没有记录在案的证据支持。"},
    "unverified_note": {"en": "Numbers marked like this are not backed by evidence.",
                        "zh": "这样标记的数字没有证据支持。"},
    "open_question": {"en": "The analyst needs your answer", "zh": "需要你的回答"},
    "send_answer": {"en": "Send", "zh": "发送"},
    "downloads": {"en": "Download the report", "zh": "下载报告"},
    "analysis_script": {"en": "analysis script", "zh": "分析脚本"},
    "view_run": {"en": "View", "zh": "查看"},
    "run_error": {"en": "The analysis did not finish.", "zh": "分析没有完成。"},
    "too_many_runs": {"en": "{n} of your analyses are already running or waiting to start. Ask again when one "
                            "has finished (or stop one).",
                      "zh": "你已有 {n} 个分析正在进行或排队。请等其中一个完成（或停止一个）后再提问。"},
    # read-only report links
    "share_link": {"en": "Share a read-only link…", "zh": "分享只读链接…"},
    "share_title": {"en": "Share this report", "zh": "分享这份报告"},
    "share_what": {"en": "Anyone who has the link can read this report without signing in: the question, the "
                         "answer, the evidence and the charts, with personal data masked as in the report. They "
                         "cannot see your files, your other analyses or anything else in the workspace.",
                   "zh": "任何拿到链接的人无需登录即可阅读这份报告：问题、结论、证据和图表（个人数据按报告中的方式遮盖）。"
                         "他们看不到你的文件、其他分析或工作区中的其他内容。"},
    "share_confirm": {"en": "Create the link", "zh": "创建链接"},
    "share_created": {"en": "Copy the link now: it is shown only once. Revoke it here when it is no longer needed.",
                      "zh": "请立即复制链接：它只显示这一次。不再需要时，可在此撤销。"},
    "share_loopback_link": {"en": "This link points at this computer (localhost), so only this computer can open it. "
                                  "To share with others, start Verity with --host 0.0.0.0 and set VERITY_PUBLIC_URL to "
                                  "the address they use (see the README, Sharing).",
                            "zh": "这个链接指向本机（localhost），只有这台电脑能打开。要分享给别人，请用 --host 0.0.0.0 "
                                  "启动 Verity，并把 VERITY_PUBLIC_URL 设为别人访问的地址（见 README 的“分享”一节）。"},
    "share_loopback_server": {"en": "Verity listens on this computer only (loopback), so others cannot open the link "
                                    "unless a proxy forwards to it. Start it with --host 0.0.0.0, or set "
                                    "VERITY_PUBLIC_URL to the proxy's address.",
                              "zh": "Verity 只在本机（回环地址）上监听，除非有代理转发，别人打不开这个链接。请用 --host 0.0.0.0 "
                                    "启动，或把 VERITY_PUBLIC_URL 设为代理的地址。"},
    "skip_to_content": {"en": "Skip to the main content", "zh": "跳到主要内容"},
    "ask_enter_hint": {"en": "Enter sends the question; Shift+Enter starts a new line.",
                       "zh": "按 Enter 发送问题；按 Shift+Enter 换行。"},
    "copy": {"en": "Copy", "zh": "复制"},
    "copied": {"en": "Copied", "zh": "已复制"},
    "share_existing": {"en": "Links to this report", "zh": "这份报告的链接"},
    "share_views": {"en": "views", "zh": "次查看"},
    "share_revoke": {"en": "Revoke", "zh": "撤销"},
    "back_to_run": {"en": "Back to the analysis", "zh": "返回分析"},
    # workspace knowledge
    "knowledge_title": {"en": "Reference notes", "zh": "参考资料"},
    "knowledge_help": {"en": "Background the analyst may consult: how your company counts things, what happened "
                             "when, a glossary. Only the parts that fit the question are used, as reference: "
                             "they never override your rules.",
                       "zh": "分析时可参考的背景资料：公司的统计口径、发生过的事件、术语表等。每次只取与问题相关的部分，"
                             "仅作参考，不会覆盖你的规则。"},
    "knowledge_note_title": {"en": "Title (optional)", "zh": "标题（可选）"},
    "knowledge_note_text": {"en": "Note", "zh": "笔记"},
    "knowledge_file": {"en": "…or a document (.txt, .md, .docx, .pdf)", "zh": "……或上传文档（.txt、.md、.docx、.pdf）"},
    "knowledge_add": {"en": "Add", "zh": "添加"},
    "knowledge_saved": {"en": "Added; it is consulted from the next question.", "zh": "已添加，从下一个问题起参考。"},
    "knowledge_none": {"en": "No reference notes yet.", "zh": "还没有参考资料。"},
    "knowledge_remove": {"en": "Remove", "zh": "删除"},
    "knowledge_chars": {"en": "characters", "zh": "字"},
    # workspace rules file and traces
    "rules_title": {"en": "Workspace rules", "zh": "工作区规则"},
    "rules_help": {"en": "Definitions and preferences the analyst follows in every question of this workspace "
                           "(e.g. \"Revenue excludes returns\", \"Compare months by daily average\").",
                   "zh": "本工作区每次提问时分析助手都会遵循的定义和偏好（例如“收入不含退货”“按日均比较月份”）。"},
    "rules_save": {"en": "Save rules", "zh": "保存规则"},
    "rules_saved": {"en": "Rules saved; they apply from the next question.", "zh": "规则已保存，从下一个问题起生效。"},
    "view_trace": {"en": "Trace (what the model saw)", "zh": "追踪（模型看到的内容）"},
    "trace": {"en": "Trace", "zh": "追踪"},
    "back_to_run": {"en": "Back to the run", "zh": "返回分析"},
    "trace_run": {"en": "Run", "zh": "运行"},
    "trace_help": {"en": "Every model call with the exact request it was sent, and every tool call, in order.",
                   "zh": "按顺序列出每次模型调用（含发送的完整请求）和每次工具调用。"},
    "trace_model_calls": {"en": "model calls", "zh": "次模型调用"},
    "trace_tool_calls": {"en": "tool calls", "zh": "次工具调用"},
    "trace_tokens": {"en": "tokens in/out", "zh": "输入/输出 token"},
    "trace_errors": {"en": "errors", "zh": "个错误"},
    "trace_model_call": {"en": "Model call", "zh": "模型调用"},
    "trace_round": {"en": "round", "zh": "轮次"},
    "trace_http_attempts": {"en": "HTTP attempts", "zh": "次 HTTP 尝试"},
    "trace_messages": {"en": "messages", "zh": "条消息"},
    "trace_tools": {"en": "tools", "zh": "个工具"},
    "trace_request": {"en": "Request sent to the model", "zh": "发送给模型的请求"},
    "trace_response": {"en": "Response", "zh": "响应"},
    "trace_budget_table": {"en": "Context budget", "zh": "上下文预算"},
    "trace_arguments": {"en": "arguments", "zh": "参数"},
    "trace_result": {"en": "result", "zh": "结果"},
    "trace_chars": {"en": "characters", "zh": "字符"},
    # errors
    "error_title": {"en": "Something went wrong", "zh": "出了点问题"},
    "error_not_found": {"en": "We could not find that page.", "zh": "找不到这个页面。"},
    "error_internal": {"en": "Verity hit an unexpected problem. Your data is safe; please try again.",
                       "zh": "Verity 遇到了意外问题。你的数据是安全的，请重试。"},
    "error_bad_request": {"en": "The request could not be understood.", "zh": "无法理解这个请求。"},
    "error_too_large": {"en": "This file is too large to upload.", "zh": "文件太大，无法上传。"},
    "dataset_damaged": {"en": "Verity's working copy of this file is damaged, so it is left out of analyses. The file "
                              "you uploaded is kept unchanged.",
                        "zh": "Verity 为这个文件保存的工作副本已损坏，暂不参与分析；你上传的原始文件完好无损。"},
    "dataset_rebuild": {"en": "Rebuild it from the original file", "zh": "用原始文件重新生成"},
    "error_disk_full": {"en": "The disk of the Verity server is full, so nothing new could be saved. What was "
                              "saved before is safe. Ask the administrator to free some space, then try again.",
                        "zh": "Verity 服务器的磁盘已满，新的内容无法保存；之前保存的内容都还在。请让管理员清理出一些空间后再试。"},
    "error_database_unavailable": {"en": "Verity's database did not answer. Nothing was lost; try again in a moment.",
                                   "zh": "Verity 的数据库暂时没有响应，没有丢失任何内容，请稍后再试。"},
    "error_bad_value": {"en": "The request contains a value that cannot be stored (a character or a number out of "
                              "range). Check what you entered and try again.",
                        "zh": "请求中有无法保存的内容（特殊字符或超出范围的数字），请检查输入后再试。"},
    "error_cross_site": {"en": "This form was sent from another site, so Verity refused it. Nothing was changed. "
                               "Open Verity's own page and try again.",
                         "zh": "这个表单来自其他网站，Verity 已拒绝，没有任何改动。请在 Verity 自己的页面上重试。"},
    "back_home": {"en": "Back to your workspaces", "zh": "返回工作区"},
}


def t(key: str, lang: str = "en", **values: object) -> str:
    """The UI string `key` in `lang` (English when missing), with `{name}` placeholders filled."""
    entry = STRINGS.get(key)
    if entry is None:
        return key
    text = entry.get(lang) or entry["en"]
    return text.format(**values) if values else text


def normalize_lang(value: str | None) -> str | None:
    """'zh-CN', 'zh_TW', 'ZH' → 'zh'; 'en-GB' → 'en'; anything else → None."""
    if not value:
        return None
    head = value.strip().lower().replace("_", "-").split("-")[0]
    return head if head in LANGS else None


def from_accept_language(header: str | None) -> str | None:
    """The first supported language of an Accept-Language header, by quality."""
    if not header:
        return None
    ranked = []
    for i, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        ranked.append((-quality, i, tag))
    for _, _, tag in sorted(ranked):
        if lang := normalize_lang(tag):
            return lang
    return None


# What each step is called on the page: a non-expert reads "Comparing groups", not compare_groups.
TOOL_LABELS: dict[str, dict[str, str]] = {
    "list_datasets": {"en": "Listing the data", "zh": "列出数据"},
    "preview_data": {"en": "Looking at the first rows", "zh": "查看前几行"},
    "profile_dataset": {"en": "Profiling the data", "zh": "概览数据"},
    "value_counts": {"en": "Counting values", "zh": "统计取值"},
    "describe_columns": {"en": "Describing the numbers", "zh": "描述数值"},
    "compare_two_groups": {"en": "Comparing two groups", "zh": "比较两组"},
    "compare_groups": {"en": "Comparing groups", "zh": "比较多组"},
    "correlation_analysis": {"en": "Checking relationships", "zh": "检查相关关系"},
    "linear_regression": {"en": "Fitting a regression", "zh": "回归分析"},
    "plot_histogram": {"en": "Drawing a histogram", "zh": "绘制直方图"},
    "plot_bar": {"en": "Drawing a bar chart", "zh": "绘制柱状图"},
    "plot_scatter": {"en": "Drawing a scatter plot", "zh": "绘制散点图"},
    "record_evidence": {"en": "Recording evidence", "zh": "记录证据"},
}


def tool_label(name: str, lang: str) -> str:
    """The step's name for people; unknown tools fall back to their name with spaces."""
    labels = TOOL_LABELS.get(name)
    return labels[lang if lang in LANGS else "en"] if labels else name.replace("_", " ")


def tool_labels(lang: str) -> dict[str, str]:
    return {name: tool_label(name, lang) for name in TOOL_LABELS}
