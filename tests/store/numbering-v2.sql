-- numbering-v2.sql: a grants.db (schema version 2) as the zsp of commit 7b4cd23 wrote it,
-- before enum zsp_answer was renumbered (it had ALLOW 0, DENY 1, ASK 2, the numbers the
-- database keeps: doc/store.md "Schema"). Made with that zsp's zspc and dumped with sqlite3:
--   zspc grant add --tool terminal --exact "make" --allow --global --policy old
--   zspc grant add --tool terminal --exact "make deploy" --deny --global --policy old
--   zspc grant add --tool terminal --prefix '^cargo\s' --allow --global --policy old
--   zspc grant add --tool terminal --prefix '^npm\s' --deny --global --policy old
--   zspc grant add --tool read_file --path /srv/data --allow --global --policy old
--   zspc --query REQ --record old.zsp   for terminal "ls -la", "rm -rf x", "gcc x.c", "make",
--                                       "make deploy" (allow, deny, ask, allow, deny)
-- with old.zsp: policy "old" { fs { read "/"; deny "/etc/shadow"; }
--   tool "terminal" { default ask; allow /^ls\b/; deny /^rm\b/; } }
-- tests/unit/test_store.c and test_api_grants.c load it and read it back.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE grants(id INTEGER PRIMARY KEY AUTOINCREMENT, scope INTEGER NOT NULL CHECK (scope BETWEEN 0 AND 3), thread TEXT, project TEXT, tool TEXT NOT NULL, matcher INTEGER NOT NULL CHECK (matcher BETWEEN 0 AND 3), pattern TEXT NOT NULL, decision INTEGER NOT NULL CHECK (decision IN (0, 1)), policy TEXT, who TEXT, created INTEGER NOT NULL, expires INTEGER NOT NULL DEFAULT 0);
INSERT INTO grants VALUES(1,3,NULL,NULL,'terminal',0,'make',0,'old','root',1796177126,0);
INSERT INTO grants VALUES(2,3,NULL,NULL,'terminal',0,'make deploy',1,'old','root',1796177126,0);
INSERT INTO grants VALUES(3,3,NULL,NULL,'terminal',1,'^cargo\s',0,'old','root',1796177126,0);
INSERT INTO grants VALUES(4,3,NULL,NULL,'terminal',1,'^npm\s',1,'old','root',1796177126,0);
INSERT INTO grants VALUES(5,3,NULL,NULL,'read_file',2,'/srv/data',0,'old','root',1796177126,0);
CREATE TABLE audit(id INTEGER PRIMARY KEY, time INTEGER NOT NULL, request TEXT NOT NULL, decision INTEGER NOT NULL, reason TEXT, rule TEXT, policy TEXT, policy_hash TEXT, thread TEXT, project TEXT, who TEXT);
INSERT INTO audit VALUES(1,1796177126,'terminal "ls -la"',0,'rule','old.zsp:4:40: allow /^ls\b/','old','8d3be6d47fffe24a75f7ede3b121b3d9eef0f06f56ef4ab4d1c08c2ad330b7b0',NULL,NULL,'root');
INSERT INTO audit VALUES(2,1796177126,'terminal "rm -rf x"',1,'rule','old.zsp:4:54: deny /^rm\b/','old','8d3be6d47fffe24a75f7ede3b121b3d9eef0f06f56ef4ab4d1c08c2ad330b7b0',NULL,NULL,'root');
INSERT INTO audit VALUES(3,1796177127,'terminal "gcc x.c"',2,'tool-default','old.zsp:4:8: default ask','old','8d3be6d47fffe24a75f7ede3b121b3d9eef0f06f56ef4ab4d1c08c2ad330b7b0',NULL,NULL,'root');
INSERT INTO audit VALUES(4,1796177127,'terminal "make"',0,'grant','grant 1','old','8d3be6d47fffe24a75f7ede3b121b3d9eef0f06f56ef4ab4d1c08c2ad330b7b0',NULL,NULL,'root');
INSERT INTO audit VALUES(5,1796177127,'terminal "make deploy"',1,'grant','grant 2','old','8d3be6d47fffe24a75f7ede3b121b3d9eef0f06f56ef4ab4d1c08c2ad330b7b0',NULL,NULL,'root');
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('grants',5);
CREATE INDEX grants_key ON grants(tool, matcher, pattern);
CREATE INDEX grants_thread ON grants(thread) WHERE thread IS NOT NULL;
CREATE INDEX grants_expires ON grants(expires) WHERE expires <> 0;
CREATE INDEX audit_time ON audit(time);
COMMIT;
PRAGMA user_version = 2;
