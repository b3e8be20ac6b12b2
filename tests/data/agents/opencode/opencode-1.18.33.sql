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
INSERT INTO project (id, worktree, vcs, name, icon_url, icon_url_override, icon_color, time_created, time_updated, time_initialized, sandboxes, commands) VALUES ('global', '/', NULL, NULL, NULL, NULL, NULL, 1796313551692, 1796313599959, NULL, '[]', NULL);
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
INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, path, title, version, share_url, summary_additions, summary_deletions, summary_files, summary_diffs, metadata, cost, tokens_input, tokens_output, tokens_reasoning, tokens_cache_read, tokens_cache_write, revert, permission, agent, model, time_created, time_updated, time_compacting, time_archived) VALUES ('ses_dc35e4f12ffecdDtZr4YGTyQ93', 'global', NULL, NULL, 'hidden-cactus', '/home/user/project', 'home/user/project', 'Standin title', '1.18.33', NULL, 0, 0, 0, NULL, NULL, 0.0, 24297, 18, 0, 0, 0, NULL, NULL, 'build', '{"id":"mock-model","providerID":"mock"}', 1796313559277, 1796313663795, NULL, NULL);
CREATE TABLE `message` (
  `id` text PRIMARY KEY,
  `session_id` text NOT NULL,
  `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL,
  `data` text NOT NULL,
  CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
  );
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca1b11e0018HnuapW5V0Mhc9', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313559326, 1796313576778, '{"role":"user","time":{"created":1796313559326},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca1b1dd001BPxZRbnfR3pXt6', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313559517, 1796313576483, '{"parentID":"msg_23ca1b11e0018HnuapW5V0Mhc9","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/project","root":"/"},"cost":0,"tokens":{"total":8076,"input":8070,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"mock-model","providerID":"mock","time":{"created":1796313559517,"completed":1796313576482},"finish":"stop"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca1fb7b001LF3mvUejgKdXts', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313578363, 1796313581666, '{"role":"user","time":{"created":1796313578363},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca1fbd3001l4bqf61G43b8Vy', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313578451, 1796313581374, '{"parentID":"msg_23ca1fb7b001LF3mvUejgKdXts","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/project","root":"/"},"cost":0,"tokens":{"total":8105,"input":8099,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"mock-model","providerID":"mock","time":{"created":1796313578451,"completed":1796313581358},"finish":"stop"}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca2d9d90017hIru1vm6PR7m1', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313635289, 1796313663803, '{"role":"user","time":{"created":1796313635289},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"},"summary":{"diffs":[]}}');
INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_23ca2f2ea001qvtIqyGGsS4yJz', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313641706, 1796313663772, '{"parentID":"msg_23ca2d9d90017hIru1vm6PR7m1","role":"assistant","mode":"build","agent":"build","path":{"cwd":"/home/user/project","root":"/"},"cost":0,"tokens":{"total":8134,"input":8128,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"modelID":"mock-model","providerID":"mock","time":{"created":1796313641706,"completed":1796313663770},"finish":"stop"}');
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
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1b1210012ZvlkwDyv3RZTs', 'msg_23ca1b11e0018HnuapW5V0Mhc9', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313559336, 1796313559338, '{"type":"text","text":"the first word is plum"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1f2e90014l4903zpBDdebC', 'msg_23ca1b1dd001BPxZRbnfR3pXt6', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313576169, 1796313576190, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1f3280015qWF68xEpJFCsB', 'msg_23ca1b1dd001BPxZRbnfR3pXt6', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313576233, 1796313576327, '{"type":"text","text":"Echo: the first word is plum","time":{"start":1796313576232,"end":1796313576325}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1f3b8001smAfsspGrOUke4', 'msg_23ca1b1dd001BPxZRbnfR3pXt6', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313576404, 1796313576406, '{"reason":"stop","type":"step-finish","tokens":{"total":8076,"input":8070,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca1fb7b002wDZkqt1GVR3y6F', 'msg_23ca1fb7b001LF3mvUejgKdXts', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313578391, 1796313578393, '{"type":"text","text":"the second word is pear"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca20657001QoLi6rHcxhXxNI', 'msg_23ca1fbd3001l4bqf61G43b8Vy', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313581143, 1796313581158, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca2067a001I6pTN2OG7HFF5U', 'msg_23ca1fbd3001l4bqf61G43b8Vy', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313581178, 1796313581236, '{"type":"text","text":"Echo: the second word is pear","time":{"start":1796313581178,"end":1796313581234}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca206dd001IbMXIQMvnbnm5H', 'msg_23ca1fbd3001l4bqf61G43b8Vy', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313581278, 1796313581294, '{"reason":"stop","type":"step-finish","tokens":{"total":8105,"input":8099,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca2d9ee001WU5Y90KvHsf7xZ', 'msg_23ca2d9d90017hIru1vm6PR7m1', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313635471, 1796313635486, '{"type":"text","text":"the third word is quince"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca348ef001603woEI7FCE7nS', 'msg_23ca2f2ea001qvtIqyGGsS4yJz', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313663727, 1796313663730, '{"type":"step-start"}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca348f6001GXjG687zdG6lab', 'msg_23ca2f2ea001qvtIqyGGsS4yJz', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313663734, 1796313663749, '{"type":"text","text":"Echo: the third word is quince","time":{"start":1796313663734,"end":1796313663747}}');
INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES ('prt_23ca3490c001r71GB3dCbQYhkY', 'msg_23ca2f2ea001qvtIqyGGsS4yJz', 'ses_dc35e4f12ffecdDtZr4YGTyQ93', 1796313663757, 1796313663759, '{"reason":"stop","type":"step-finish","tokens":{"total":8134,"input":8128,"output":6,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0}');
COMMIT;
