"""A class that can be graded: exercises in the notebooks (otter-grader's master format), the student edition,
and offline grading of submitted notebooks, each answer run in the sandbox.

The committed notebooks are the teacher's edition: solutions and hidden checks present, and the series runs them, so
every solution passes its checks on every run. :func:`write_student_edition` writes the notebooks to hand out;
:func:`grade` and :func:`write_grades` turn a folder of submissions into a grade table and feedback."""

from tomlib.grading._edition import student_notebook, write_student_edition
from tomlib.grading._exercises import Check, Exercise, NeedsGrader, exercises, has_exercises
from tomlib.grading._grade import Graded, answer_code, feedback, grade, run_check, write_grades

__all__ = [
    "Check",
    "Exercise",
    "Graded",
    "NeedsGrader",
    "answer_code",
    "exercises",
    "feedback",
    "grade",
    "has_exercises",
    "run_check",
    "student_notebook",
    "write_grades",
    "write_student_edition",
]
