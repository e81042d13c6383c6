-- Hub store schema. Times are Unix epoch milliseconds (portable between H2 and PostgreSQL).

CREATE TABLE api_keys (
    key_hash    CHAR(64)     NOT NULL PRIMARY KEY, -- hex SHA-256 of the plaintext key; plaintext is never stored
    team        VARCHAR(128) NOT NULL,
    role        VARCHAR(32)  NOT NULL,            -- 'admin' or 'user'
    created_at  BIGINT       NOT NULL
);

CREATE TABLE templates (
    name                    VARCHAR(128) NOT NULL PRIMARY KEY,
    pool_size               INT          NOT NULL,
    network                 VARCHAR(32)  NOT NULL, -- 'host' or 'isolated'
    default_timeout_seconds INT          NOT NULL,
    created_at              BIGINT       NOT NULL
);

CREATE TABLE sandboxes (
    sandbox_id  VARCHAR(64)   NOT NULL PRIMARY KEY,
    cluster_id  VARCHAR(64)   NOT NULL,
    template    VARCHAR(128)  NOT NULL,
    team        VARCHAR(128)  NOT NULL,
    metadata    VARCHAR(65536) NOT NULL,  -- JSON object of strings
    created_at  BIGINT        NOT NULL,
    end_at      BIGINT        NOT NULL,
    ended       BOOLEAN       DEFAULT FALSE NOT NULL,
    end_reason  VARCHAR(64)
);
CREATE INDEX sandboxes_team_ended ON sandboxes (team, ended);

-- Small hub-wide settings, e.g. the secret that derives envd access tokens.
CREATE TABLE hub_settings (
    name   VARCHAR(64)   NOT NULL PRIMARY KEY,
    val    VARCHAR(1024) NOT NULL
);

INSERT INTO templates (name, pool_size, network, default_timeout_seconds, created_at)
VALUES ('base', 4, 'host', 300, 0);
