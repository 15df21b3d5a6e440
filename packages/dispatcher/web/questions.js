// @ts-check
// The question dialog: a turn's `question` frames wait here, shown one at a time in a modal dialog, and are
// answered with a choice or free text (the `answer` frame, with the question's session: a question asked before a
// restart then resumes its turn) or declined. A question leaves when its `question_closed` frame arrives. Text
// only, built with textContent. Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {import("../src/protocol.js").QuestionFrame} QuestionFrame */
/** @typedef {import("../src/protocol.js").ClientFrame} ClientFrame */

/**
 * The page's element with this id (index.html has each one the dialog uses).
 * @param {string} id
 */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * Wires the question dialog of index.html. `send` sends a frame; `newRef` gives a new `client_msg_id`.
 * @param {{ send: (frame: ClientFrame) => boolean, newRef: () => string }} options
 */
export function createQuestionDialog({ send, newRef }) {
  /**
   * The questions waiting, by id, in the order they came.
   * @type {Map<string, QuestionFrame>}
   */
  const questions = new Map();
  /**
   * The question the dialog shows, or null.
   * @type {string | null}
   */
  let shownQuestion = null;

  function showNextQuestion() {
    const dialog = /** @type {HTMLDialogElement} */ ($("question-dialog"));
    if (shownQuestion && questions.has(shownQuestion)) return;
    const next = [...questions.values()][0];
    if (!next) return;
    shownQuestion = next.question_id;
    $("question-text").textContent = next.question;
    $("question-error").hidden = true;
    const choices = $("question-choices");
    choices.replaceChildren(
      ...(next.choices ?? []).map((choice) => {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = choice;
        button.addEventListener("click", () => answerQuestion(next, choice));
        return button;
      }),
    );
    $("question-free").hidden = Array.isArray(next.choices) && next.choices.length > 0;
    /** @type {HTMLInputElement} */ ($("question-answer")).value = "";
    if (!dialog.open) dialog.showModal();
  }

  /**
   * Answers with the question's session: a question asked before a restart then resumes its turn.
   * @param {QuestionFrame} question
   * @param {string} value
   */
  function answerQuestion(question, value) {
    send({
      type: "answer",
      session_id: question.session_id,
      question_id: question.question_id,
      value,
      client_msg_id: newRef(),
    });
  }

  function closeQuestion() {
    shownQuestion = null;
    const dialog = /** @type {HTMLDialogElement} */ ($("question-dialog"));
    if (dialog.open) dialog.close();
    showNextQuestion();
  }

  $("question-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const question = shownQuestion === null ? undefined : questions.get(shownQuestion);
    if (question) answerQuestion(question, /** @type {HTMLInputElement} */ ($("question-answer")).value);
  });
  $("question-decline").addEventListener("click", () => {
    if (shownQuestion) send({ type: "decline", question_id: shownQuestion });
  });
  $("question-dialog").addEventListener("cancel", (event) => event.preventDefault());

  return {
    /**
     * A `question` frame: it waits, and shows when no other is shown.
     * @param {QuestionFrame} frame
     */
    ask(frame) {
      questions.set(frame.question_id, frame);
      showNextQuestion();
    },
    /**
     * A `question_closed` frame: the question goes (and the next one shows, if it was shown).
     * @param {string} questionId
     */
    closed(questionId) {
      questions.delete(questionId);
      if (shownQuestion === questionId) closeQuestion();
    },
    /**
     * A `resync` of a session: its questions go until the dispatcher sends them again.
     * @param {string} sessionId
     */
    forgetSession(sessionId) {
      for (const [id, question] of questions) if (question.session_id === sessionId) questions.delete(id);
      if (shownQuestion !== null && !questions.has(shownQuestion)) closeQuestion();
    },
    /** The socket is down: nothing can be answered, every question goes until the dispatcher sends them again. */
    forgetAll() {
      questions.clear();
      if (shownQuestion !== null) closeQuestion();
    },
  };
}
