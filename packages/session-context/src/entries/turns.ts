// @openprogram/session-context/turns: durable turns: resuming a turn that stopped short,
// answering questions that outlived their process, and the program references a turn
// records so it can be resumed (the CLI's `resume` and `answer`, the dispatcher, research).

export {
  prepareResume,
  PreparedResume,
  resumeTurn,
  type ProgramResolver,
  type ResumableProgram,
  type ResumeTurnOptions,
} from "../turns/resume-turn.js";
export { checkRecordedModule, type RecordedModule, type RecordedModulePolicy } from "../turns/recorded-module.js";
export { answerQuestion, type AnswerQuestionOptions, type AnsweredQuestion } from "../turns/answer-question.js";
export { routeAnswer, type AnswerRoute, type RouteAnswerOptions } from "../turns/route-answer.js";
export {
  describeTurn,
  findResumableTurn,
  type FindTurnOptions,
  type PendingQuestion,
  type ResumableTurn,
} from "../turns/find-resumable.js";
export {
  moduleProgramRef,
  parseProgramRef,
  registeredProgramRef,
  RESEARCH_PROGRAM_REF,
  type ParsedProgramRef,
  type TurnProgram,
} from "../turns/program-ref.js";
