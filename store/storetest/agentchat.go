package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/agentchat"
)

// RunAgentChat runs the agentchat section: conversations, messages whose
// IDs are unique and rising across every conversation of the store even
// under concurrent appends from several processes, and the
// interruption of runs a stopped process left.
func RunAgentChat(t *testing.T, newStores NewStores) {
	newChat := func(t *testing.T) agentchat.Store {
		st := newStores(t).AgentChat
		if st == nil {
			t.Fatal("storetest: Stores.AgentChat is required")
		}
		return st
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	conv := func(id string, updated time.Time) agentchat.Conversation {
		return agentchat.Conversation{ID: id, Title: "t " + id, Status: agentchat.StatusIdle, CreatedAt: at, UpdatedAt: updated}
	}

	t.Run("Conversations", func(t *testing.T) {
		t.Parallel()
		st := newChat(t)
		ctx := context.Background()
		a, b := conv("conv_a", at), conv("conv_b", at.Add(time.Second))
		b.User = "dana" // who started it reads back; a's is empty
		require.NoError(t, st.CreateConversation(ctx, a))
		require.NoError(t, st.CreateConversation(ctx, b))
		got, err := st.GetConversation(ctx, "conv_a")
		require.NoError(t, err)
		require.Equal(t, a, got)
		_, err = st.GetConversation(ctx, "conv_missing")
		require.ErrorIs(t, err, agentchat.ErrConversationNotFound)
		all := agentchat.ListConversationsParams{Limit: 100}
		list, err := st.ListConversations(ctx, all)
		require.NoError(t, err)
		require.Equal(t, []agentchat.Conversation{b, a}, list, "most recently updated first")

		require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: "conv_a", Status: agentchat.StatusRunning, SessionID: "sess", Title: "", At: at.Add(2 * time.Second)}))
		got, err = st.GetConversation(ctx, "conv_a")
		require.NoError(t, err)
		require.Equal(t, agentchat.StatusRunning, got.Status)
		require.Equal(t, "sess", got.SessionID)
		require.Equal(t, "t conv_a", got.Title, "an empty title keeps the old one")
		require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: "conv_a", Status: agentchat.StatusIdle, SessionID: "", Title: "renamed", At: at.Add(3 * time.Second)}))
		got, _ = st.GetConversation(ctx, "conv_a")
		require.Equal(t, "sess", got.SessionID, "an empty session keeps the old one")
		require.Equal(t, "renamed", got.Title)
		list, _ = st.ListConversations(ctx, all)
		require.Equal(t, "conv_a", list[0].ID)
		b2, err := st.GetConversation(ctx, "conv_b")
		require.NoError(t, err)
		require.Equal(t, "dana", b2.User)
		require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: "conv_b", Status: agentchat.StatusIdle, SessionID: "s", Title: "r", At: at.Add(4 * time.Second)}))
		b2, _ = st.GetConversation(ctx, "conv_b")
		require.Equal(t, "dana", b2.User, "an update keeps the user")
		require.ErrorIs(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: "conv_missing", Status: agentchat.StatusIdle, SessionID: "", Title: "", At: at}), agentchat.ErrConversationNotFound)

		require.NoError(t, st.DeleteConversation(ctx, "conv_b"))
		require.ErrorIs(t, st.DeleteConversation(ctx, "conv_b"), agentchat.ErrConversationNotFound)
		_, err = st.ListChatMessages(ctx, "conv_b", 0)
		require.ErrorIs(t, err, agentchat.ErrConversationNotFound)
		list, _ = st.ListConversations(ctx, all)
		require.Len(t, list, 1)
	})

	t.Run("ConversationsPaged", func(t *testing.T) {
		t.Parallel()
		st := newChat(t)
		ctx := context.Background()
		var want []string // most recently updated first
		for i := range 7 {
			id := fmt.Sprintf("conv_%d", i)
			updated := at.Add(time.Duration(i/2) * time.Second) // pairs tie: the higher ID first
			require.NoError(t, st.CreateConversation(ctx, conv(id, updated)))
			want = append([]string{id}, want...)
		}
		var got []string
		before := ""
		for {
			page, err := st.ListConversations(ctx, agentchat.ListConversationsParams{Limit: 3, Before: before})
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), 3)
			for _, c := range page {
				got = append(got, c.ID)
			}
			if len(page) < 3 {
				break
			}
			before = page[len(page)-1].ID
		}
		require.Equal(t, want, got, "every conversation once, in order")
		_, err := st.ListConversations(ctx, agentchat.ListConversationsParams{Limit: 3, Before: "conv_missing"})
		require.ErrorIs(t, err, agentchat.ErrConversationNotFound)
		last, err := st.ListConversations(ctx, agentchat.ListConversationsParams{Limit: 3, Before: "conv_0"})
		require.NoError(t, err)
		require.Empty(t, last, "nothing after the oldest")
	})

	t.Run("MessageIDs", func(t *testing.T) {
		t.Parallel()
		here, there := chatPeers(t, newStores)
		ctx := context.Background()
		for _, id := range []string{"conv_m", "conv_n"} {
			require.NoError(t, here.CreateConversation(ctx, conv(id, at)))
		}
		// Two processes append to two conversations at once: every ID is
		// unique across the store.
		const n = 50
		var mu sync.Mutex
		byConv := map[string][]int64{}
		var all []int64
		concurrently(2*n, func(i int) {
			c, st := "conv_m", here
			if i%2 == 1 {
				c, st = "conv_n", there
			}
			m, err := st.AppendChatMessage(ctx, agentchat.Message{ConversationID: c, Type: agentchat.EventAssistant, Content: fmt.Sprint("m", i), CreatedAt: at})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			byConv[c] = append(byConv[c], m.ID)
			all = append(all, m.ID)
			mu.Unlock()
		})
		slices.Sort(all)
		require.Len(t, slices.Compact(all), 2*n, "IDs are unique across conversations")
		for _, c := range []string{"conv_m", "conv_n"} {
			list, err := here.ListChatMessages(ctx, c, 0)
			require.NoError(t, err)
			require.Len(t, list, n)
			ids := make([]int64, n)
			for i, m := range list {
				ids[i] = m.ID
				require.Equal(t, c, m.ConversationID)
				require.Equal(t, at, m.CreatedAt)
				require.Equal(t, agentchat.EventAssistant, m.Type)
			}
			require.True(t, slices.IsSorted(ids), "listed in ID order")
			slices.Sort(byConv[c])
			require.Equal(t, byConv[c], ids, "the IDs the appends returned")
			tail, err := here.ListChatMessages(ctx, c, ids[44])
			require.NoError(t, err)
			require.Equal(t, list[45:], tail, "after an ID of the conversation")
		}

		// A message stored later, in any conversation and by any process,
		// has a higher ID: slot-machine's page keeps the last ID it saw when
		// the user starts a new conversation, and asks the new one's stream
		// for what came after it.
		last := all[len(all)-1]
		require.NoError(t, there.CreateConversation(ctx, conv("conv_new", at)))
		first, err := there.AppendChatMessage(ctx, agentchat.Message{ConversationID: "conv_new", Type: agentchat.EventUser, Content: "hi", CreatedAt: at})
		require.NoError(t, err)
		require.Greater(t, first.ID, last)
		second, err := here.AppendChatMessage(ctx, agentchat.Message{ConversationID: "conv_m", Type: agentchat.EventUser, Content: "hi", CreatedAt: at})
		require.NoError(t, err)
		require.Greater(t, second.ID, first.ID)
		got, err := here.ListChatMessages(ctx, "conv_new", last)
		require.NoError(t, err)
		require.Equal(t, []agentchat.Message{first}, got, "after an ID of another conversation")
		got, err = there.ListChatMessages(ctx, "conv_m", first.ID)
		require.NoError(t, err)
		require.Equal(t, []agentchat.Message{second}, got)
		got, err = here.ListChatMessages(ctx, "conv_new", second.ID)
		require.NoError(t, err)
		require.Empty(t, got, "after an ID beyond the conversation's last")

		_, err = here.AppendChatMessage(ctx, agentchat.Message{ConversationID: "conv_missing", Type: agentchat.EventUser, Content: "x", CreatedAt: at})
		require.ErrorIs(t, err, agentchat.ErrConversationNotFound)
	})

	t.Run("InterruptRunning", func(t *testing.T) {
		t.Parallel()
		st := newChat(t)
		ctx := context.Background()
		for _, id := range []string{"conv_1", "conv_2", "conv_3", "conv_4", "conv_5"} {
			require.NoError(t, st.CreateConversation(ctx, conv(id, at)))
		}
		busy := func(id string, status agentchat.Status, lease time.Time) {
			t.Helper()
			require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: id, Status: status, SessionID: "", Title: "", At: at, LeaseUntil: lease}))
		}
		busy("conv_1", agentchat.StatusRunning, time.Time{})        // no lease: a leftover
		busy("conv_2", agentchat.StatusQueued, at.Add(time.Second)) // its lease ends before the sweep
		busy("conv_4", agentchat.StatusRunning, at.Add(time.Hour))  // a live process's run
		busy("conv_5", agentchat.StatusQueued, at.Add(time.Second)) // renewed below
		cancels, err := st.RenewConversations(ctx, []string{"conv_5", "conv_3", "conv_missing"}, at.Add(2*time.Minute))
		require.NoError(t, err)
		require.Empty(t, cancels, "no cancel was requested")
		// A title written during a run keeps its lease.
		require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: "conv_4", Status: agentchat.StatusRunning, SessionID: "", Title: "named", At: at}))
		ids, err := st.InterruptRunning(ctx, at.Add(time.Minute))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"conv_1", "conv_2"}, ids)
		for id, want := range map[string]agentchat.Status{"conv_1": agentchat.StatusInterrupted, "conv_2": agentchat.StatusInterrupted,
			"conv_3": agentchat.StatusIdle, "conv_4": agentchat.StatusRunning, "conv_5": agentchat.StatusQueued} {
			c, err := st.GetConversation(ctx, id)
			require.NoError(t, err)
			require.Equal(t, want, c.Status, id)
		}
		ids, err = st.InterruptRunning(ctx, at.Add(time.Minute))
		require.NoError(t, err)
		require.Empty(t, ids)
		// A renewal does not bring back an idle conversation's lease: conv_3
		// was renewed while idle; made busy without a lease, it is a leftover.
		busy("conv_3", agentchat.StatusRunning, time.Time{})
		ids, err = st.InterruptRunning(ctx, at.Add(2*time.Minute))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"conv_3", "conv_5"}, ids, "a lease ends at its time")
		ids, err = st.InterruptRunning(ctx, at.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{"conv_4"}, ids)
	})

	// A cancel asked of a run is stored (RequestCancel), for the process
	// that runs or queues the conversation to find when it renews its
	// lease, even if the notifier lost the message that carried it; it
	// lasts as long as the run it asks to stop, and no longer.
	t.Run("RequestCancel", func(t *testing.T) {
		t.Parallel()
		st := newChat(t)
		ctx := context.Background()
		statuses := []agentchat.Status{agentchat.StatusIdle, agentchat.StatusQueued, agentchat.StatusRunning,
			agentchat.StatusError, agentchat.StatusInterrupted, agentchat.StatusCancelled}
		set := func(id string, status agentchat.Status, title string) {
			t.Helper()
			require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: id, Status: status, Title: title, At: at, LeaseUntil: at.Add(time.Hour)}))
		}
		var all []string
		for _, status := range statuses {
			id := "conv_" + string(status)
			require.NoError(t, st.CreateConversation(ctx, conv(id, at)))
			set(id, status, "")
			all = append(all, id)
		}
		renew := func() []string {
			t.Helper()
			ids, err := st.RenewConversations(ctx, all, at.Add(time.Hour))
			require.NoError(t, err)
			return ids
		}
		require.Empty(t, renew(), "nothing asked yet")

		before, err := st.GetConversation(ctx, "conv_running")
		require.NoError(t, err)
		for _, status := range statuses {
			err := st.RequestCancel(ctx, "conv_"+string(status))
			if status.Busy() {
				require.NoError(t, err, status)
			} else {
				require.ErrorIs(t, err, agentchat.ErrNotRunning, status)
			}
		}
		require.ErrorIs(t, st.RequestCancel(ctx, "conv_missing"), agentchat.ErrConversationNotFound)
		after, err := st.GetConversation(ctx, "conv_running")
		require.NoError(t, err)
		require.Equal(t, before, after, "the request changes neither the status nor UpdatedAt")
		require.ElementsMatch(t, []string{"conv_queued", "conv_running"}, renew())
		require.ElementsMatch(t, []string{"conv_queued", "conv_running"}, renew(), "a renewal leaves the mark")
		ids, err := st.RenewConversations(ctx, []string{"conv_running", "conv_idle", "conv_missing"}, at.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{"conv_running"}, ids, "only among those renewed")
		require.NoError(t, st.RequestCancel(ctx, "conv_running"), "asked twice")

		// The queued run starts, and a title is written during the other:
		// a running or queued status keeps the mark.
		set("conv_queued", agentchat.StatusRunning, "")
		set("conv_running", agentchat.StatusRunning, "named")
		require.ElementsMatch(t, []string{"conv_queued", "conv_running"}, renew(), "kept by a running or queued status")

		// The runs end: the mark goes with them, and the next runs start
		// with none.
		set("conv_queued", agentchat.StatusIdle, "")
		set("conv_running", agentchat.StatusCancelled, "")
		require.Empty(t, renew(), "cleared as the runs end")
		set("conv_queued", agentchat.StatusQueued, "")
		set("conv_running", agentchat.StatusRunning, "")
		require.Empty(t, renew(), "the next runs are not asked to stop")

		// A run interrupted (its process stopped) loses its mark too.
		require.NoError(t, st.RequestCancel(ctx, "conv_running"))
		require.NoError(t, st.RequestCancel(ctx, "conv_queued"))
		ids, err = st.InterruptRunning(ctx, at.Add(2*time.Hour))
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"conv_queued", "conv_running"}, ids)
		set("conv_queued", agentchat.StatusQueued, "")
		set("conv_running", agentchat.StatusRunning, "")
		require.Empty(t, renew(), "cleared by the interruption")
	})

	// A cancel asked as the run ends never outlives the run: RequestCancel
	// checks the status and marks in one step, so its mark never lands on
	// a conversation the run has left, where it would stop the next run.
	// The requests come from another process, as a remote Cancel's do.
	t.Run("RaceRequestCancelAndRunEnd", func(t *testing.T) {
		t.Parallel()
		here, there := chatPeers(t, newStores)
		ctx := context.Background()
		const askers = 6
		for r := range raceRepeats * 2 {
			id := fmt.Sprintf("conv_race%d", r)
			require.NoError(t, here.CreateConversation(ctx, conv(id, at)))
			require.NoError(t, here.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: id, Status: agentchat.StatusRunning, At: at, LeaseUntil: at.Add(time.Hour)}))
			var endErr error
			asked := make([]error, askers+1)
			concurrently(askers+1, func(i int) {
				if i == 0 {
					endErr = here.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: id, Status: agentchat.StatusIdle, At: at})
				} else {
					asked[i] = there.RequestCancel(ctx, id)
				}
			})
			require.NoError(t, endErr)
			for _, err := range asked[1:] {
				if err != nil {
					require.ErrorIs(t, err, agentchat.ErrNotRunning)
				}
			}
			// The next run starts: no request of the last may stop it.
			require.NoError(t, here.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: id, Status: agentchat.StatusRunning, At: at, LeaseUntil: at.Add(time.Hour)}))
			ids, err := here.RenewConversations(ctx, []string{id}, at.Add(time.Hour))
			require.NoError(t, err)
			require.Empty(t, ids, "round %d: a cancel outlived the run it asked to stop", r)
		}
	})

	t.Run("DeleteRefusesABusyConversation", func(t *testing.T) {
		t.Parallel()
		st := newChat(t)
		ctx := context.Background()
		for _, status := range []agentchat.Status{agentchat.StatusRunning, agentchat.StatusQueued} {
			id := "conv_" + string(status)
			require.NoError(t, st.CreateConversation(ctx, conv(id, at)))
			_, err := st.AppendChatMessage(ctx, agentchat.Message{ConversationID: id, Type: agentchat.EventUser, Content: "go", CreatedAt: at})
			require.NoError(t, err)
			require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: id, Status: status, At: at}))
			require.ErrorIs(t, st.DeleteConversation(ctx, id), agentchat.ErrConversationBusy, status)
			ms, err := st.ListChatMessages(ctx, id, 0)
			require.NoError(t, err)
			require.Len(t, ms, 1, "%s: nothing is deleted", status)
			require.NoError(t, st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: id, Status: agentchat.StatusCancelled, At: at}))
			require.NoError(t, st.DeleteConversation(ctx, id))
		}
	})

	// A run starting (its conversation set running) races a delete: one of
	// the two wins, never both — a delete that checked the status apart from
	// its write would delete a conversation whose run has started.
	t.Run("RaceDeleteAndRunStart", func(t *testing.T) {
		t.Parallel()
		st := newChat(t)
		ctx := context.Background()
		for r := range raceRepeats * 4 {
			id := fmt.Sprintf("conv_race%d", r)
			require.NoError(t, st.CreateConversation(ctx, conv(id, at)))
			var runErr, delErr error
			concurrently(2, func(i int) {
				if i == 0 {
					runErr = st.UpdateConversation(ctx, agentchat.ConversationUpdate{ID: id, Status: agentchat.StatusRunning, At: at})
				} else {
					delErr = st.DeleteConversation(ctx, id)
				}
			})
			if delErr == nil {
				require.ErrorIs(t, runErr, agentchat.ErrConversationNotFound, "the run starts on a deleted conversation")
				continue
			}
			require.NoError(t, runErr)
			require.ErrorIs(t, delErr, agentchat.ErrConversationBusy)
			c, err := st.GetConversation(ctx, id)
			require.NoError(t, err)
			require.Equal(t, agentchat.StatusRunning, c.Status)
		}
	})

	// A conversation whose agent runs in another process sharing the store
	// is not deleted from this one: the run would go on for nothing.
	t.Run("DeleteRefusesARunElsewhere", func(t *testing.T) {
		t.Parallel()
		peer, here, there, r := twoProcesses(t, newStores)
		ctx := context.Background()
		c, err := here.Create(ctx, agentchat.NewConversation{Title: "busy elsewhere"})
		require.NoError(t, err)
		_, err = here.Send(ctx, c.ID, "long job")
		require.NoError(t, err)
		<-r.started
		require.ErrorIs(t, there.Delete(ctx, c.ID), agentchat.ErrBusy)
		_, ms, err := there.Conversation(ctx, c.ID)
		require.NoError(t, err, "the conversation is still there")
		require.NotEmpty(t, ms)
		require.NoError(t, here.Cancel(ctx, c.ID))
		require.Eventually(t, func() bool {
			got, err := peer.GetConversation(ctx, c.ID)
			return err == nil && got.Status == agentchat.StatusCancelled
		}, 10*time.Second, 10*time.Millisecond)
		require.NoError(t, there.Delete(ctx, c.ID), "deleted once the run ended")
	})

	// A cancel sent from another process reaches the run through the
	// store alone: these two share no notifier, as if every message
	// between them were lost, and the run still ends cancelled when its
	// process next renews its lease.
	t.Run("CancelElsewhereWithoutNotifier", func(t *testing.T) {
		t.Parallel()
		const lease = time.Second // renewed every third of it
		peer, here, there, r := twoProcesses(t, newStores, agentchat.WithRunLease(lease))
		ctx := context.Background()
		for _, svc := range []*agentchat.Service{here, there} {
			_, err := svc.Start(ctx)
			require.NoError(t, err)
		}
		c, err := here.Create(ctx, agentchat.NewConversation{Title: "no notifier"})
		require.NoError(t, err)
		_, err = here.Send(ctx, c.ID, "long job")
		require.NoError(t, err)
		<-r.started
		require.NoError(t, there.Cancel(ctx, c.ID), "the request is stored")
		require.Eventually(t, func() bool {
			got, err := peer.GetConversation(ctx, c.ID)
			return err == nil && got.Status == agentchat.StatusCancelled
		}, 10*time.Second, 10*time.Millisecond, "the run's process found the request")
		require.ErrorIs(t, there.Cancel(ctx, c.ID), agentchat.ErrNotRunning)
	})

	t.Run("CancelAcrossNotifierCut", func(t *testing.T) {
		t.Parallel()
		st := newStores(t)
		if st.CutPeer == nil {
			t.Skip("this backend's notifier has no connection to cut")
		}
		ctx := context.Background()
		r := &blockingRunner{started: make(chan struct{}, 1)}
		here := agentchat.New(st.AgentChat, r, agentchat.WithNotifier(st.Notifier))
		defer here.Close()
		there := agentchat.New(st.AgentChat, r, agentchat.WithNotifier(st.Peer))
		defer there.Close()
		for _, svc := range []*agentchat.Service{here, there} {
			_, err := svc.Start(ctx)
			require.NoError(t, err)
		}
		// The peer's listener drops while nothing runs: its service hears
		// the notifier's empty resync event and must carry on.
		st.CutPeer(t)
		c, err := here.Create(ctx, agentchat.NewConversation{Title: "after the cut"})
		require.NoError(t, err)
		_, err = here.Send(ctx, c.ID, "long job")
		require.NoError(t, err)
		<-r.started
		// A cancel published while a listener is still reconnecting may be
		// lost (events are hints); the stored request outlasts it, but is
		// found only by the next renewal (a third of the default lease), so
		// the peer repeats it to see it land sooner.
		require.Eventually(t, func() bool {
			if err := there.Cancel(ctx, c.ID); err != nil {
				return errors.Is(err, agentchat.ErrNotRunning)
			}
			got, err := st.AgentChat.GetConversation(ctx, c.ID)
			return err == nil && got.Status == agentchat.StatusCancelled
		}, 10*time.Second, 50*time.Millisecond, "the peer's cancel reaches the run after the reconnect")
	})
}

// chatPeers returns fresh stores' AgentChat and PeerChat, the store as
// two processes sharing the backend have it (AgentChat twice when the
// backend has no PeerChat).
func chatPeers(t *testing.T, newStores NewStores) (here, there agentchat.Store) {
	st := newStores(t)
	if st.PeerChat == nil {
		return st.AgentChat, st.AgentChat
	}
	return st.AgentChat, st.PeerChat
}

// twoProcesses returns two services on fresh stores, as two processes
// sharing the backend have them, with no notifier between them: here on
// AgentChat, there and peer on PeerChat (AgentChat when the backend has
// none); both run r, and opts configure both. They close with t.
func twoProcesses(t *testing.T, newStores NewStores, opts ...agentchat.Option) (peer agentchat.Store, here, there *agentchat.Service, r *blockingRunner) {
	mine, peer := chatPeers(t, newStores)
	r = &blockingRunner{started: make(chan struct{}, 1)}
	here = agentchat.New(mine, r, opts...)
	t.Cleanup(here.Close)
	there = agentchat.New(peer, r, opts...)
	t.Cleanup(there.Close)
	return peer, here, there, r
}

// blockingRunner is a Runner whose runs last until they are cancelled.
type blockingRunner struct{ started chan struct{} }

func (r *blockingRunner) Run(ctx context.Context, req agentchat.RunRequest) (agentchat.RunResult, error) {
	r.started <- struct{}{}
	<-ctx.Done()
	return agentchat.RunResult{Stopped: "cancelled"}, nil
}
