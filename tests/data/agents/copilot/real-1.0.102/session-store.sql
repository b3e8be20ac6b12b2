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
INSERT INTO assistant_usage_events VALUES (1, 'e3e9b1ba-5d2a-4899-88ff-e04ba9c639ef', 0, NULL, NULL, 'mock-model', NULL, 14397, 6, 0, 0, NULL, NULL, 0.0, 118, 109.061065, 109.078711, 0.3790688, 'user', '/chat/completions', NULL, 'stop', 0, NULL, '2026-12-03T16:11:42.746Z');
INSERT INTO assistant_usage_events VALUES (2, 'e3e9b1ba-5d2a-4899-88ff-e04ba9c639ef', 1, NULL, NULL, 'mock-model', NULL, 14447, 6, 0, 0, NULL, NULL, 0.0, 12, 5.565523, 5.58403099999999952274e+00, 1.27675599999999972444e-01, 'user', '/chat/completions', NULL, 'stop', 0, NULL, '2026-12-03T16:11:47.213Z');
INSERT INTO assistant_usage_events VALUES (3, 'e3e9b1ba-5d2a-4899-88ff-e04ba9c639ef', 1, NULL, NULL, 'mock-model', NULL, 14490, 6, 0, 0, NULL, NULL, 0.0, 96, 94.484929, 94.500061, 0.0704116, 'user', '/chat/completions', NULL, 'stop', 0, NULL, '2026-12-03T16:12:06.663Z');
