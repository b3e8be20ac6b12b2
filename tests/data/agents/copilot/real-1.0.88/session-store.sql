CREATE TABLE assistant_usage_events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                session_id TEXT NOT NULL REFERENCES sessions(id),
                turn_index INTEGER,
                agent_id TEXT,
                parent_tool_call_id TEXT,
                model TEXT NOT NULL,
                copilot_usage_model TEXT,
                input_tokens INTEGER,
                output_tokens INTEGER,
                cache_read_tokens INTEGER,
                cache_write_tokens INTEGER,
                reasoning_tokens INTEGER,
                total_nano_aiu INTEGER,
                request_multiplier REAL,
                duration_ms INTEGER,
                time_to_first_token_ms INTEGER,
                output_ttft_ms REAL,
                inter_token_latency_ms INTEGER,
                initiator TEXT,
                api_endpoint TEXT,
                reasoning_effort TEXT,
                finish_reason TEXT,
                content_filter_triggered INTEGER,
                token_details_json TEXT,
                created_at TEXT DEFAULT (datetime('now'))
            );
INSERT INTO assistant_usage_events VALUES (1, '97b8fa66-8437-4257-b18d-2f77de4f71c7', 0, NULL, NULL, 'mock-model', NULL, 13979, 6, 0, 0, 0, NULL, 0.0, 67, 6.63857489999999899037e+01, 66.401102, 0.0822434, 'user', '/chat/completions', NULL, 'stop', 0, NULL, '2026-12-03T16:11:38.493Z');
INSERT INTO assistant_usage_events VALUES (2, '97b8fa66-8437-4257-b18d-2f77de4f71c7', 1, NULL, NULL, 'mock-model', NULL, 14028, 6, 0, 0, 0, NULL, 0.0, 21, 19.77061, 19.780265, 0.0676896, 'user', '/chat/completions', NULL, 'stop', 0, NULL, '2026-12-03T16:11:40.542Z');
INSERT INTO assistant_usage_events VALUES (3, '97b8fa66-8437-4257-b18d-2f77de4f71c7', 1, NULL, NULL, 'mock-model', NULL, 14071, 6, 0, 0, 0, NULL, 0.0, 94, 9.27005880000000104246e+01, 92.71532, 0.07469, 'user', '/chat/completions', NULL, 'stop', 0, NULL, '2026-12-03T16:12:02.318Z');
