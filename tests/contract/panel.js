// The Personal Statistics webview's side, as the extension's own media/rankingChart.tsx does it:
// it posts `webviewReady` when mounted, keeps the state the extension's messages set, answers
// `loginSuccess` with `updateLeaderboard`, and its Register form posts
// {type: 'register', username, password: undefined, metadata}. `display()` says what the
// panel shows for that state, following the component's render (header, the "No leaderboard
// data available yet" box when the vote count is 0, the table sorted by elo with
// Math.round(elo), the "More data needed" overlay below 20 votes).
'use strict';

const MIN_USER_VOTES = 20; // rankingChart.tsx

class Panel {
  constructor(view) {
    this.view = view;
    this.received = [];
    this.state = {
      chart: [],
      selections: [],
      sortAscending: false,
      userVoteCount: 0,
      mostRecentScores: [],
      username: null,
    };
    view.onPosted = (message) => this.receive(message);
  }

  receive(message) {
    this.received.push(message.type);
    const s = this.state;
    switch (message.type) {
      case 'updateChart':
        s.chart = message.data;
        break;
      case 'initializeSelections':
        s.selections = message.selections;
        s.sortAscending = message.sortAscending;
        break;
      case 'updateUserScores':
        s.mostRecentScores = message.data;
        break;
      case 'updateUserVoteCount':
        s.userVoteCount = message.data;
        break;
      case 'loginSuccess':
        s.username = message.username;
        return this.view.fromWebview({ type: 'updateLeaderboard' });
      case 'logoutSuccess':
        s.username = null;
        break;
      default:
        break;
    }
    return undefined;
  }

  mount() {
    return this.view.fromWebview({ type: 'webviewReady' });
  }

  register(username, metadata) {
    // RegisterModal.handleSubmit: the form has no password field.
    return this.view.fromWebview({ type: 'register', username, password: undefined, metadata });
  }

  display() {
    const s = this.state;
    const table = [...s.mostRecentScores]
      .sort((a, b) => b.elo - a.elo)
      .map((row, i) => ({ rank: i + 1, model: row.model, elo: Math.round(row.elo), votes: row.votes }));
    return {
      header: s.username ? `Welcome, ${s.username}!` : 'Register',
      noDataMessage: s.userVoteCount === 0,
      voteCount: s.userVoteCount,
      table: s.userVoteCount === 0 ? [] : table,
      locked: s.userVoteCount !== 0 && s.userVoteCount < MIN_USER_VOTES,
      unlockText: s.userVoteCount !== 0 && s.userVoteCount < MIN_USER_VOTES
        ? `Unlock with ${MIN_USER_VOTES - s.userVoteCount} votes.` : null,
      chartPoints: s.chart.length,
      chart: s.chart,
      selectionHistory: s.selections.length,
    };
  }
}

module.exports = { Panel, MIN_USER_VOTES };
