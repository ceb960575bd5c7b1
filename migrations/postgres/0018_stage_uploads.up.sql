-- CSV uploads of stage changes (issue 19, docs/stage-upload.md). An upload
-- is checked (a dry run, status previewing, then previewed) before it is
-- applied (applying, then done); both passes run in the background, a
-- chunk of rows at a time, and keep their progress here, so the page can be
-- left and a restarted server resumes them. The file waiting to be applied
-- is kept apart, written once; header holds its header and a sample value
-- per column for the mapping form. pass counts the passes: a worker writes
-- only while the pass it started is current. lease_until is held by the
-- server applying the upload, renewed after each chunk.
CREATE TABLE stage_uploads (
    id           bigserial PRIMARY KEY,
    account_id   bigint NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id      bigint REFERENCES users (id) ON DELETE SET NULL,
    file_name    text NOT NULL,
    header       text NOT NULL DEFAULT '[]',
    mapping      text NOT NULL DEFAULT '{}',
    status       text NOT NULL CHECK (status IN ('mapping', 'previewing', 'previewed', 'applying', 'done', 'failed')),
    pass         integer NOT NULL DEFAULT 0,
    total_rows   integer NOT NULL DEFAULT 0,
    done_rows    integer NOT NULL DEFAULT 0,
    applied      integer NOT NULL DEFAULT 0,
    replayed     integer NOT NULL DEFAULT 0,
    refused      integer NOT NULL DEFAULT 0,
    events       integer NOT NULL DEFAULT 0,
    event_counts text NOT NULL DEFAULT '{}',
    error        text NOT NULL DEFAULT '',
    lease_until  timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    finished_at  timestamptz
);
CREATE INDEX stage_uploads_account_idx ON stage_uploads (account_id, id);
CREATE INDEX stage_uploads_running_idx ON stage_uploads (status) WHERE status IN ('previewing', 'applying');

CREATE TABLE stage_upload_files (
    upload_id bigint PRIMARY KEY REFERENCES stage_uploads (id) ON DELETE CASCADE,
    content   text NOT NULL
);

-- A pass's rows that stay out, with the reason: the first 1,000 of a pass
-- (refused counts them all).
CREATE TABLE stage_upload_problems (
    id         bigserial PRIMARY KEY,
    upload_id  bigint NOT NULL REFERENCES stage_uploads (id) ON DELETE CASCADE,
    row_number integer NOT NULL,
    field      text NOT NULL DEFAULT '',
    message    text NOT NULL
);
CREATE INDEX stage_upload_problems_upload_idx ON stage_upload_problems (upload_id, row_number);
