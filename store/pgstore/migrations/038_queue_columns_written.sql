-- is_open and lease_due (migration 031) stop being generated columns: every
-- statement that changes a slot's status or lease now writes them itself
-- (pgstore's takenColumns, finishedColumns and openedColumns), with the
-- same values. PostgreSQL 15 compiles a table's generation expressions
-- again at the start of every statement that writes to it, parsing them
-- from the catalog: about 100 k instructions per statement, a seventh of
-- a lone seat's finish-and-take. The indexes and their values stay as
-- they are.
ALTER TABLE agora_role_slots
    ALTER COLUMN is_open DROP EXPRESSION,
    ALTER COLUMN lease_due DROP EXPRESSION;
