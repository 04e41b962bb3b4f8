-- Posts a plain squad-chat message; mirrors the contract of
-- discussion.Store.PostMessage (memstore's PostMessage is the reference):
-- a reply's target must be stored, checked and written in this one script.
-- KEYS: the message key, the messages index, the replied-to message key
-- (the message key again when the message replies to nothing).
-- ARGV: message ID, message JSON, '1' when the message is a reply.
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[3]) == 0 then
  return fail('reply_to_not_found')
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[1])
return 1
