-- Protocol names compare byte-wise (COLLATE "C"), as IDs do: the protocols
-- listing orders names tied on claims and last use by their bytes, as
-- every store does (slots.CompareProtocolUses), whatever the database's
-- collation. The column's key and the listing's index are rebuilt with it.
ALTER TABLE agora_protocol_uses ALTER COLUMN name TYPE text COLLATE "C";
