-- KEYS: the job-queue index matching the filter.
-- ARGV: namespace, r (negative for the oldest, else in [0,1)), key ID,
-- agent name, avatar URL, now, lease expiry ("0" for none).
-- Returns the job it took as push_job writes it, or nil when no slot is
-- eligible.
--
-- NextOpenSlot's pick (lib.lua's pick_job: open slots of claims where the
-- agent holds nothing) and TakeSlot's take (assign_slot) in one script, so
-- the slot picked is the slot taken: no other caller sees it open between
-- the two. Keys are derived from the namespace, under KEYS[1]'s hash tag.
local out = {}
local took = take_next(ARGV[1], KEYS[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], out)
flush_leaving()
if took then
  return out
end
return nil
