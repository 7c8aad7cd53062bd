"""The page an invitation's link opens (dashboard.team): the invitee chooses a user name
and a password, which makes their dashboard account, once. The invitation is proof
beyond the password: this browser may then set up the account's authenticator app
(dashboard.enrolment)."""

from django import forms
from django.contrib.auth import get_user_model, password_validation
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from dashboard import enrolment, team


class JoinForm(forms.Form):
    username = forms.CharField(
        label="User name",
        max_length=150,
        validators=[UnicodeUsernameValidator()],
        help_text="What you type to sign in: letters, digits and @ . + - _ only.",
        widget=forms.TextInput(attrs={"autocomplete": "username", "autocapitalize": "none"}),
    )
    password1 = forms.CharField(
        label="Password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        help_text=password_validation.password_validators_help_text_html(),
    )
    password2 = forms.CharField(
        label="The same password again",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args, email: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.email = email

    def clean_username(self):
        username = self.cleaned_data["username"]
        if get_user_model().objects.filter(username__iexact=username).exists():
            raise forms.ValidationError("That user name is taken: choose another.")
        return username

    def clean(self):
        cleaned = super().clean()
        first, second = cleaned.get("password1"), cleaned.get("password2")
        if first and second and first != second:
            self.add_error("password2", "The two passwords differ.")
        elif first:
            user = get_user_model()(username=cleaned.get("username", ""), email=self.email)
            try:
                password_validation.validate_password(first, user)
            except forms.ValidationError as error:
                self.add_error("password1", error)
        return cleaned


def join_view(site, request: HttpRequest, token: str) -> HttpResponse:
    """The invitation's page: a form while the link works, then the account is ready; a
    used or expired link says so (410)."""
    invitation = team.usable_invitation(token)
    context = {**site.each_context(request), "title": "Join your shop's team"}
    if invitation is None:
        context.update(title="This invitation no longer works", message=team.INVITATION_UNUSABLE)
        return TemplateResponse(request, "admin/team/join_gone.html", context, status=410)
    form = JoinForm(request.POST if request.method == "POST" else None, email=invitation.email)
    if form.is_valid():
        try:
            user = team.accept(token, form.cleaned_data["username"], form.cleaned_data["password1"])
        except team.TeamError as error:
            context.update(title="This invitation no longer works", message=str(error))
            return TemplateResponse(request, "admin/team/join_gone.html", context, status=410)
        enrolment.grant(request.session, user)
        context.update(title="Your account is ready", user_made=user, invitation=invitation)
        return TemplateResponse(request, "admin/team/joined.html", context)
    context.update(form=form, invitation=invitation)
    response = TemplateResponse(request, "admin/team/join.html", context)
    response["Cache-Control"] = "no-store"
    return response
