-- A real OpenCode database's rows (scripts/opencode-fixture), paths made anonymous.
BEGIN;
CREATE TABLE `project` (
  `id` text PRIMARY KEY,
  `worktree` text NOT NULL,
  `vcs` text,
  `name` text,
  `icon_url` text,
  `icon_url_override` text,
  `icon_color` text,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `time_initialized` integer,
  `sandboxes` text NOT NULL,
  `commands` text
  );
INSERT INTO project (id, worktree, vcs, name, icon_url, icon_url_override, icon_color, time_created, time_updated, time_initialized, sandboxes, commands) VALUES ('global', '/', NULL, NULL, NULL, NULL, NULL, 1796313551491, 1796313591005, NULL, '[]', NULL);
CREATE TABLE `session` (
  `id` text PRIMARY KEY,
  `project_id` text NOT NULL,
  `workspace_id` text,
  `parent_id` text,
  `slug` text NOT NULL,
  `directory` text NOT NULL,
  `path` text,
  `title` text NOT NULL,
  `version` text NOT NULL,
  `share_url` text,
  `summary_additions` integer,
  `summary_deletions` integer,
  `summary_files` integer,
  `summary_diffs` text,
  `metadata` text,
  `cost` real DEFAULT 0 NOT NULL,
  `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL,
  `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL,
  `tokens_cache_write` integer DEFAULT 0 NOT NULL,
  `revert` text,
  `permission` text,
  `agent` text,
  `model` text,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `time_compacting` integer,
  `time_archived` integer,
  CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
  );
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);
INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, path, title, version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created, time_updated, time_compacting, time_archived) VALUES ('ses_dc35e5038ffejQ4vxIRougzq3Y', 'global', NULL, NULL, 'curious-tiger', '/home/user/project', 'home/user/project', 'Standin title', '1.17.19', NULL, 0, 0, 0, NULL, NULL, 0.0, 24297, 18, 0, 0, 0, NULL, NULL, 'build', '{"id":"mock-model","providerID":"mock"}', 1796313558983, 1796313634341, NULL, NULL);
CREATE TABLE `message` (
  `id` text PRIMARY KEY,
  `session_id` text NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
  );
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca1b680001RqoZ5kGHa8vyaL', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313560704, 1796313567411, '{"role":"user","time":{"created":1796313560704},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca1b737001kiGN54GN7Zr3Vl', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313560887, 1796313566558, '{"parentID":"msg_23ca1b680001RqoZ5kGHa8vyaL","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/project","root":"/"},"cost":0,"tokens":{"total":8076,"input":8070,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"mock-model","providerID":"mock","time":{"created":1796313560887,"completed":1796313566552},"finish":"stop"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca1d509001UPnDZXGS8SPX8v', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313568521, 1796313572788, '{"role":"user","time":{"created":1796313568521},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca1d528001e3XD1sf2kTydAZ', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313568552, 1796313572644, '{"parentID":"msg_23ca1d509001UPnDZXGS8SPX8v","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/project","root":"/"},"cost":0,"tokens":{"total":8105,"input":8099,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"mock-model","providerID":"mock","time":{"created":1796313568552,"completed":1796313572642},"finish":"stop"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca28ba9001gLqv7UsY6Yrkr6', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313615273, 1796313634465, '{"role":"user","time":{"created":1796313615273},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca2a38c001pSe0q8gb4FYyPw', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313621388, 1796313634169, '{"parentID":"msg_23ca28ba9001gLqv7UsY6Yrkr6","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/project","root":"/"},"cost":0,"tokens":{"total":8134,"input":8128,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"mock-model","providerID":"mock","time":{"created":1796313621388,"completed":1796313634146},"finish":"stop"}');
CREATE TABLE `part` (
  `id` text PRIMARY KEY,
  `message_id` text NOT NULL,
  `session_id` text NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `data` text NOT NULL,
  CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
  );
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1b68c001ikeRD2P00ZP7jj', 'msg_23ca1b680001RqoZ5kGHa8vyaL', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313560747, 1796313560765, '{"type":"text","text":"the first word is plum"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1cd00001O9lgsjutNIIFVF', 'msg_23ca1b737001kiGN54GN7Zr3Vl', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313566464, 1796313566477, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1cd0f001PY7QxQVrxTG3Zg', 'msg_23ca1b737001kiGN54GN7Zr3Vl', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313566479, 1796313566495, '{"type":"text","text":"Echo: the first word is plum","time":{"start":1796313566479,"end":1796313566494}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1cd2f001s4fcZJeDVjvCUD', 'msg_23ca1b737001kiGN54GN7Zr3Vl', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313566511, 1796313566518, '{"reason":"stop","type":"step-finish","tokens":{"total":8076,"input":8070,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1d50a001PQtd7GH6Udz2A2', 'msg_23ca1d509001UPnDZXGS8SPX8v', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313568536, 1796313568545, '{"type":"text","text":"the second word is pear"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1e430001NqjLArcftHo7dG', 'msg_23ca1d528001e3XD1sf2kTydAZ', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313572400, 1796313572403, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1e451001xL0H84OiDhyNBl', 'msg_23ca1d528001e3XD1sf2kTydAZ', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313572433, 1796313572480, '{"type":"text","text":"Echo: the second word is pear","time":{"start":1796313572433,"end":1796313572478}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1e4b90010xl9htitJRbmcQ', 'msg_23ca1d528001e3XD1sf2kTydAZ', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313572537, 1796313572562, '{"reason":"stop","type":"step-finish","tokens":{"total":8105,"input":8099,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca28bc60015v34DHIPwtviMy', 'msg_23ca28ba9001gLqv7UsY6Yrkr6', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313615380, 1796313615453, '{"type":"text","text":"the third word is quince"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca2d3c7001KDud3j3YGW1nEQ', 'msg_23ca2a38c001pSe0q8gb4FYyPw', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313633735, 1796313633754, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca2d3f90014NVcATvrbIi2fC', 'msg_23ca2a38c001pSe0q8gb4FYyPw', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313633785, 1796313633887, '{"type":"text","text":"Echo: the third word is quince","time":{"start":1796313633785,"end":1796313633884}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca2d4a3001ih7t2MQy51NwAk', 'msg_23ca2a38c001pSe0q8gb4FYyPw', 'ses_dc35e5038ffejQ4vxIRougzq3Y', 1796313633955, 1796313634024, '{"reason":"stop","type":"step-finish","tokens":{"total":8134,"input":8128,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
COMMIT;
